// Protects: keyless CI beyond GitHub, end to end (docs/keyless-ci.md): GitLab, Buildkite, CircleCI and Bitbucket
// tokens, each exactly as its provider issues it (test/fixtures/oidc), signed by a loopback issuer at a path per
// provider with its own key, exchanged through rules of that provider; every provider's token presented to every
// other provider's rule is refused; an issuer no rule of the app names is never fetched; keys are chosen by kid
// within the token's own issuer; each provider's refusals at rule creation (422 with pointers) and at exchange (the
// same 401, the reason audited with the claims its rules look at); one use per token (by jti, or by the token's
// digest where the provider sends none); GitLab pins on first use; dry-run and build provenance for each provider;
// an unknown claim is logged once a day, by name only.
import { randomInt } from 'node:crypto';
import { Writable } from 'node:stream';
import { startHarness, json, type Harness } from '../support/harness';
import { startOidcIssuer, type OidcIssuer, type PathIssuer } from '../support/oidc-issuer';
import { createLogger } from '../../src/core/logger';
import type { AuditDoc } from '../../src/data/audit-repo';
import { gitlabClaims, GITLAB_HEADER } from '../fixtures/oidc/gitlab';
import { buildkiteClaims, BUILDKITE_HEADER } from '../fixtures/oidc/buildkite';
import { circleciClaims, CIRCLECI_HEADER, CIRCLECI_ORG_ID, CIRCLECI_PROJECT_ID, CIRCLECI_CONTEXT_ID } from '../fixtures/oidc/circleci';
import { bitbucketClaims, BITBUCKET_HEADER, BITBUCKET_REPOSITORY_UUID, BITBUCKET_WORKSPACE_UUID } from '../fixtures/oidc/bitbucket';

const readJson = (res: Response): Promise<any> => res.json();
const clientAddress = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

type Provider = 'gitlab' | 'buildkite' | 'circleci' | 'bitbucket';
const PROVIDERS: Provider[] = ['gitlab', 'buildkite', 'circleci', 'bitbucket'];

let root: OidcIssuer;
let h: Harness;
const issuers = {} as Record<Provider, PathIssuer>;
const logLines: string[] = [];

beforeAll(async () => {
  root = await startOidcIssuer();
  // Each provider's issuer at its own path, its keys where the provider serves them.
  issuers.gitlab = root.at('/gitlab', '/oauth/discovery/keys');
  issuers.buildkite = root.at('/buildkite', '/.well-known/jwks');
  issuers.circleci = root.at(`/circleci/org/${CIRCLECI_ORG_ID}`, '/.well-known/jwks-pub.json');
  issuers.bitbucket = root.at('/bitbucket/2.0/workspaces/acme/pipelines-config/identity/oidc', '/keys.json'); // RS256, as its discovery document says
  const spare = root.at('/gitlab-other', '/oauth/discovery/keys'); // allowed by the operator, named by no rule
  h = await startHarness({
    env: {
      OIDC_ISSUER: root.url,
      OIDC_ALLOW_INSECURE_ISSUER: 'on',
      OIDC_ALLOWED_ISSUERS: [...PROVIDERS.map((p) => issuers[p].url), spare.url].join(','),
    },
  });
  root.bind({ audience: h.baseUrl, now: () => h.clock.now() });
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  h.deps.logger = createLogger('trace', sink);
});
afterAll(async () => {
  await h.close();
  await root.close();
});

const base = (provider: Provider) => ({ issuer: issuers[provider].url, audience: h.baseUrl, now: h.clock.now() });

/** The provider's claims, field for field (test/fixtures/oidc), with overrides. */
function claimsOf(provider: Provider, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  switch (provider) {
    case 'gitlab':
      return gitlabClaims(base(provider), overrides);
    case 'buildkite':
      return buildkiteClaims(base(provider), overrides);
    case 'circleci':
      return circleciClaims(base(provider), overrides);
    case 'bitbucket':
      return bitbucketClaims(base(provider), overrides);
  }
}

const HEADERS: Record<Provider, Record<string, unknown>> = { gitlab: GITLAB_HEADER, buildkite: BUILDKITE_HEADER, circleci: CIRCLECI_HEADER, bitbucket: BITBUCKET_HEADER };
const mint = (provider: Provider, overrides: Record<string, unknown> = {}) => issuers[provider].sign(claimsOf(provider, overrides), HEADERS[provider]);

/** A rule of each provider admitting its fixture's default job. */
const RULES: Record<Provider, () => Record<string, unknown>> = {
  gitlab: () => ({ provider: 'gitlab', issuer: issuers.gitlab.url, subjectPattern: 'project_path:acme/mobile-app:ref_type:branch:ref:main', scopes: ['builds:write', 'builds:read'] }),
  buildkite: () => ({ provider: 'buildkite', issuer: issuers.buildkite.url, organizationSlug: 'acme', pipelineSlug: 'mobile-app', branch: 'main', scopes: ['builds:write', 'builds:read'] }),
  circleci: () => ({ provider: 'circleci', issuer: issuers.circleci.url, projectId: CIRCLECI_PROJECT_ID, contextIds: [CIRCLECI_CONTEXT_ID], branch: 'main', scopes: ['builds:write', 'builds:read'] }),
  bitbucket: () => ({ provider: 'bitbucket', issuer: issuers.bitbucket.url, workspaceUuid: BITBUCKET_WORKSPACE_UUID, repositoryUuid: BITBUCKET_REPOSITORY_UUID, branch: 'main', scopes: ['builds:write', 'builds:read'] }),
};

function exchange(token: string, appId: string) {
  return h.api('/v1/auth/oidc', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': clientAddress() },
    body: JSON.stringify({ token, appId }),
  });
}

async function createRule(appId: string, key: string, rule: Record<string, unknown>) {
  return h.api(`/v1/apps/${appId}/oidc-rules`, { method: 'POST', headers: json(key), body: JSON.stringify(rule) });
}

async function newAppWithRules(rules: Array<Record<string, unknown>>) {
  const { appId } = await h.newApp('startup');
  const admin = await h.newKey(appId, ['rules:write', 'rules:read']);
  for (const rule of rules) {
    const res = await createRule(appId, admin.key, rule);
    expect([res.status, await res.text()]).toEqual([201, expect.any(String)]);
    h.clock.advance(1000);
  }
  return { appId, adminKey: admin.key };
}

async function deniedReasons(appId: string): Promise<AuditDoc[]> {
  return (await h.deps.repos.audit.list(appId, { limit: 100, action: 'oidc.denied' })).data;
}

describe.each(PROVIDERS)('%s', (provider) => {
  it('exchanges its token through its own rule, and the build records its provenance', async () => {
    const { appId } = await newAppWithRules([RULES[provider]()]);
    const res = await exchange(mint(provider), appId);
    expect(res.status).toBe(200);
    const { accessToken, scopes } = await readJson(res);
    expect(scopes).toEqual(['builds:write', 'builds:read']);
    const created = await h.api('/v1/builds', { method: 'POST', headers: json(accessToken), body: JSON.stringify({ platform: 'android', version: '1.0.0' }) });
    expect(created.status).toBe(201);
    const build = await readJson(created);
    expect(build.provenance.provider).toBe(provider);
    expect(build.provenance.ref).toBe('refs/heads/main');
    expect(build.provenance.runId).toEqual(expect.any(String));
    // The release default (refs/heads/main while no rule sets releaseBuilds) holds where a branch can be protected:
    // GitHub and GitLab. Elsewhere a branch is a name: a release build only through a rule with releaseBuilds.
    expect(build.release).toBe(provider === 'gitlab');
    const exchanged = (await h.deps.repos.audit.list(appId, { limit: 10, action: 'oidc.exchanged' })).data;
    expect(exchanged[0].details).toMatchObject({ provider });
  });

  it('is used once: the same token again is refused as replayed', async () => {
    const { appId } = await newAppWithRules([RULES[provider]()]);
    const token = mint(provider);
    expect((await exchange(token, appId)).status).toBe(200);
    expect((await exchange(token, appId)).status).toBe(401);
    const denied = await deniedReasons(appId);
    expect(denied.map((entry) => [entry.reason, entry.provider])).toEqual([['replayed', provider]]);
  });

  it.each(PROVIDERS.filter((other) => other !== provider))('never matches a rule of %s', async (other) => {
    const { appId } = await newAppWithRules([RULES[other]()]);
    const res = await exchange(mint(provider), appId);
    expect(res.status).toBe(401);
    expect(await readJson(res)).toMatchObject({ status: 401, code: 'unauthorized' });
    // Another issuer than the rule's: refused before any key of it is fetched.
    expect((await deniedReasons(appId)).map((entry) => entry.reason)).toEqual(['issuer']);
  });

  it('never matches a GitHub rule, nor a GitHub token its rule', async () => {
    const github = await newAppWithRules([{ subjectPattern: 'repo:acme/mobile-app:ref:refs/heads/main', scopes: ['builds:write'] }]);
    expect((await exchange(mint(provider), github.appId)).status).toBe(401);
    const own = await newAppWithRules([RULES[provider]()]);
    expect((await exchange(root.mint(), own.appId)).status).toBe(401);
    // GitHub's own token, judged by GitHub's model: no GitHub rule, so not trusted (and no claims shown: no rule
    // of the app names its owner).
    expect((await deniedReasons(own.appId)).map((entry) => entry.reason)).toEqual(['not_trusted']);
    expect((await deniedReasons(github.appId)).map((entry) => entry.reason)).toEqual(['issuer']);
  });

  it('refuses a token signed by another issuer\'s key under that key\'s kid (keys are the issuer\'s own)', async () => {
    const { appId } = await newAppWithRules([RULES[provider]()]);
    const other = provider === 'gitlab' ? issuers.buildkite : issuers.gitlab;
    const token = issuers[provider].sign(claimsOf(provider), HEADERS[provider], { key: other.key });
    expect((await exchange(token, appId)).status).toBe(401);
    expect((await deniedReasons(appId)).map((entry) => entry.reason)).toEqual(['unknown_key']);
  });

  it('refuses a token of another audience', async () => {
    const { appId } = await newAppWithRules([RULES[provider]()]);
    const wrong = provider === 'bitbucket' ? { aud: 'ari:cloud:bitbucket::workspace/922e118c-f34f-4226-a897-0e0afbec553d' } : { aud: 'https://elsewhere.example' };
    expect((await exchange(mint(provider, wrong), appId)).status).toBe(401);
    expect((await deniedReasons(appId)).map((entry) => entry.reason)).toEqual(['audience']);
  });

  it('answers a dry-run of its claims as the exchange would', async () => {
    const { appId, adminKey } = await newAppWithRules([RULES[provider]()]);
    const claims = claimsOf(provider);
    const res = await h.api(`/v1/apps/${appId}/oidc-rules/dry-run`, { method: 'POST', headers: json(adminKey), body: JSON.stringify({ claims }) });
    expect(res.status).toBe(200);
    expect(await readJson(res)).toMatchObject({ matches: true, reason: null, scopes: ['builds:write', 'builds:read'] });
  });
});

describe('rule creation (422 with pointers)', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['a GitLab rule without a pattern', { provider: 'gitlab', scopes: ['builds:write'] }, '/subjectPattern'],
    ['a GitLab pattern whose group is *', { provider: 'gitlab', subjectPattern: 'project_path:*/mobile-app:ref_type:branch:ref:main', scopes: ['builds:write'] }, '/subjectPattern'],
    ['a GitLab pattern whose project is only *', { provider: 'gitlab', subjectPattern: 'project_path:acme/*:ref_type:branch:ref:main', scopes: ['builds:write'] }, '/subjectPattern'],
    ['a GitLab pattern of any ref with nothing else', { provider: 'gitlab', subjectPattern: 'project_path:acme/app:ref_type:branch:ref:*', scopes: ['builds:write'] }, '/subjectPattern'],
    ['a GitLab issuer the operator did not allow', { provider: 'gitlab', issuer: 'https://gitlab.evil.example', subjectPattern: 'project_path:acme/app:ref_type:branch:ref:main', scopes: ['builds:write'] }, '/issuer'],
    ['a GitHub field on a GitLab rule', { provider: 'gitlab', subjectPattern: 'project_path:acme/app:ref_type:branch:ref:main', workflowRef: 'acme/app/.github/workflows/x.yml@refs/heads/main', scopes: ['builds:write'] }, '/workflowRef'],
    ['a Buildkite rule without its organisation', { provider: 'buildkite', pipelineSlug: 'mobile-app', scopes: ['builds:write'] }, '/organizationSlug'],
    ['a Buildkite rule of any pipeline and branch', { provider: 'buildkite', organizationSlug: 'acme', scopes: ['builds:write'] }, '/pipelineSlug'],
    ['a CircleCI rule without an issuer', { provider: 'circleci', projectId: CIRCLECI_PROJECT_ID, scopes: ['builds:write'] }, '/issuer'],
    ['CircleCI\'s root issuer', { provider: 'circleci', issuer: 'https://oidc.circleci.com', projectId: CIRCLECI_PROJECT_ID, scopes: ['builds:write'] }, '/issuer'],
    ['a CircleCI rule without its project', { provider: 'circleci', issuer: `https://oidc.circleci.com/org/${CIRCLECI_ORG_ID}`, scopes: ['builds:write'] }, '/projectId'],
    ['a Bitbucket rule without its repository', { provider: 'bitbucket', issuer: 'https://api.bitbucket.org/2.0/workspaces/acme/pipelines-config/identity/oidc', workspaceUuid: BITBUCKET_WORKSPACE_UUID, scopes: ['builds:write'] }, '/repositoryUuid'],
    ['a Bitbucket UUID without its braces', { provider: 'bitbucket', issuer: 'https://api.bitbucket.org/2.0/workspaces/acme/pipelines-config/identity/oidc', workspaceUuid: BITBUCKET_WORKSPACE_UUID.slice(1, -1), repositoryUuid: BITBUCKET_REPOSITORY_UUID, scopes: ['builds:write'] }, '/workspaceUuid'],
    ['an issuer on a GitHub rule', { issuer: 'https://gitlab.com', subjectPattern: 'repo:acme/app:ref:refs/heads/main', scopes: ['builds:write'] }, '/issuer'],
    ['a device scope on any provider', { provider: 'buildkite', organizationSlug: 'acme', pipelineSlug: 'app', scopes: ['devices:attest'] }, '/scopes/0'],
  ];
  it.each(cases)('refuses %s', async (_name, rule, pointer) => {
    const { appId } = await h.newApp('startup');
    const admin = await h.newKey(appId, ['rules:write']);
    const res = await createRule(appId, admin.key, rule);
    expect(res.status).toBe(422);
    const problem = await readJson(res);
    expect(problem.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
  });

  it('accepts each provider\'s public issuers by default and shape, and keeps one provider per issuer within an app', async () => {
    const { appId } = await h.newApp('startup');
    const admin = await h.newKey(appId, ['rules:write', 'rules:read']);
    const gitlab = await readJson(await createRule(appId, admin.key, { provider: 'gitlab', subjectPattern: 'project_path:acme/app:ref_type:tag:ref:v*', scopes: ['builds:write'] }));
    expect(gitlab).toMatchObject({ provider: 'gitlab', issuer: 'https://gitlab.com', subjectPattern: 'project_path:acme/app:ref_type:tag:ref:v*', organizationSlug: null });
    h.clock.advance(1000);
    const buildkite = await readJson(await createRule(appId, admin.key, { provider: 'buildkite', organizationSlug: 'acme', pipelineSlug: 'app', scopes: ['builds:write'] }));
    expect(buildkite).toMatchObject({ provider: 'buildkite', issuer: 'https://agent.buildkite.com' });
    h.clock.advance(1000);
    const circleIssuer = `https://oidc.circleci.com/org/${CIRCLECI_ORG_ID}`;
    expect((await createRule(appId, admin.key, { provider: 'circleci', issuer: circleIssuer, projectId: CIRCLECI_PROJECT_ID, branch: 'main', scopes: ['builds:write'] })).status).toBe(201);
    // The same issuer named as another provider's: refused.
    h.clock.advance(1000);
    const selfManaged = await createRule(appId, admin.key, { provider: 'gitlab', issuer: issuers.gitlab.url, subjectPattern: 'project_path:acme/app:ref_type:branch:ref:main', scopes: ['builds:write'] });
    expect(selfManaged.status).toBe(201);
    const twice = await createRule(appId, admin.key, { provider: 'buildkite', issuer: issuers.gitlab.url, organizationSlug: 'acme', pipelineSlug: 'app', scopes: ['builds:write'] });
    expect(twice.status).toBe(422);
    expect((await readJson(twice)).errors[0].pointer).toBe('/issuer');
    const list = await readJson(await h.api(`/v1/apps/${appId}/oidc-rules`, { headers: json(admin.key) }));
    expect(list.data.map((rule: { provider: string }) => rule.provider)).toEqual(['gitlab', 'buildkite', 'circleci', 'gitlab']);
  });
});

describe('refusals at exchange', () => {
  const cases: Array<[string, Provider, Record<string, unknown>, string]> = [
    ['a GitLab merge-request pipeline', 'gitlab', { pipeline_source: 'merge_request_event' }, 'pull_request'],
    ['a GitLab external pull request', 'gitlab', { pipeline_source: 'external_pull_request_event' }, 'pull_request'],
    ['a fork\'s merge request run in the project (job_project_id)', 'gitlab', { job_project_id: '99' }, 'pull_request'],
    ['a GitLab child pipeline on an unprotected ref', 'gitlab', { pipeline_source: 'parent_pipeline', ref_protected: 'false' }, 'untrusted_trigger'],
    ['a GitLab subject of another project', 'gitlab', { sub: 'project_path:acme/other:ref_type:branch:ref:main' }, 'subject_mismatch'],
    ['a GitLab token without project_id', 'gitlab', { project_id: undefined }, 'missing_claim'],
    ['a GitLab token living past its job\'s hour', 'gitlab', { exp: Math.floor(Date.now() / 1000) + 7200 }, 'lifetime'],
    ['a Buildkite fork\'s pull request', 'buildkite', { build_branch: 'mallory:main' }, 'pull_request'],
    ['a Buildkite token without its organisation', 'buildkite', { organization_slug: undefined }, 'missing_claim'],
    ['a CircleCI SSH re-run', 'circleci', { 'oidc.circleci.com/ssh-rerun': true }, 'untrusted_trigger'],
    ['a CircleCI fork\'s pull request', 'circleci', { 'oidc.circleci.com/vcs-ref': 'refs/pull/7/head' }, 'pull_request'],
    ['a Buildkite build another pipeline triggered', 'buildkite', { build_source: 'trigger_job' }, 'untrusted_trigger'],
    ['a CircleCI token of another organisation than its issuer', 'circleci', { 'oidc.circleci.com/org-id': '00000000-0000-4000-8000-000000000000' }, 'subject_mismatch'],
    ['a Bitbucket token for other audiences too', 'bitbucket', { aud: ['ari:cloud:bitbucket::workspace/922e118c-f34f-4226-a897-0e0afbec553d', 'https://elsewhere.example', 'x'] }, 'audience'],
    ['a Bitbucket subject of another repository', 'bitbucket', { sub: '{00000000-0000-4000-8000-000000000000}:{11111111-1111-4111-8111-111111111111}' }, 'subject_mismatch'],
  ];
  it.each(cases)('refuses %s', async (_name, provider, overrides, reason) => {
    const { appId } = await newAppWithRules([RULES[provider]()]);
    const over = { ...overrides };
    if (reason === 'lifetime') over.exp = Math.floor(h.clock.now().getTime() / 1000) + 7200;
    const res = await exchange(mint(provider, over), appId);
    expect(res.status).toBe(401);
    const [denied] = await deniedReasons(appId);
    expect(denied.reason).toBe(reason);
  });

  it('audits a refused rule check with the claims its provider\'s rules look at, under the provider\'s names', async () => {
    const { appId } = await newAppWithRules([RULES.gitlab()]);
    expect((await exchange(mint('gitlab', { ref: 'feature' }), appId)).status).toBe(401);
    const [denied] = await deniedReasons(appId);
    expect(denied.reason).toBe('not_trusted');
    expect(denied.claims).toMatchObject({ project_path: 'acme/mobile-app', ref: 'feature', ref_type: 'branch' });
    expect(denied.rules?.[0].failed).toEqual({ check: 'subjectPattern.ref', expected: 'main', actual: 'feature' });
    const admin = await h.newKey(appId, ['rules:read']);
    const trail = await readJson(await h.api(`/v1/apps/${appId}/audit-events?action=oidc.denied`, { headers: json(admin.key) }));
    expect(trail.data[0].claims).toMatchObject({ project_path: 'acme/mobile-app', ref: 'feature' });
  });

  it('never fetches the keys of an issuer no rule of the app names, even one the operator allows', async () => {
    const { appId } = await newAppWithRules([RULES.buildkite()]);
    const spare = root.at('/gitlab-spare', '/oauth/discovery/keys');
    const token = spare.sign(gitlabClaims({ issuer: spare.url, audience: h.baseUrl, now: h.clock.now() }), GITLAB_HEADER);
    expect((await exchange(token, appId)).status).toBe(401);
    expect(spare.jwksFetches).toBe(0);
    const denied = await deniedReasons(appId);
    expect(denied.map((entry) => [entry.reason, entry.provider])).toEqual([['issuer', 'unknown']]);
  });

  it('stops trusting an issuer the operator no longer allows, though a rule names it', async () => {
    const { appId } = await newAppWithRules([RULES.gitlab()]);
    const allowed = h.deps.config.oidcAllowedIssuers;
    (h.deps as { config: unknown }).config = { ...h.deps.config, oidcAllowedIssuers: allowed.filter((url) => url !== issuers.gitlab.url) };
    try {
      expect((await exchange(mint('gitlab'), appId)).status).toBe(401);
      expect((await deniedReasons(appId)).map((entry) => entry.reason)).toEqual(['issuer']);
    } finally {
      (h.deps as { config: unknown }).config = { ...h.deps.config, oidcAllowedIssuers: allowed };
    }
  });
});

describe('GitLab pins on first use', () => {
  it('pins namespace and project ids, then refuses a re-created project of the same path', async () => {
    const { appId, adminKey } = await newAppWithRules([RULES.gitlab()]);
    expect((await exchange(mint('gitlab'), appId)).status).toBe(200);
    const [rule] = (await readJson(await h.api(`/v1/apps/${appId}/oidc-rules`, { headers: json(adminKey) }))).data;
    expect(rule).toMatchObject({ namespaceId: '72', projectId: '20' });
    const res = await exchange(mint('gitlab', { project_id: '21', job_project_id: '21' }), appId);
    expect(res.status).toBe(401);
    const [denied] = await deniedReasons(appId);
    expect(denied.rules?.[0].failed).toEqual({ check: 'projectId', expected: '20', actual: '21' });
  });
});

describe('CircleCI and Buildkite pin on first use', () => {
  it('pins CircleCI\'s repository, then refuses a fork\'s build of the same project', async () => {
    const { appId, adminKey } = await newAppWithRules([RULES.circleci()]);
    expect((await exchange(mint('circleci'), appId)).status).toBe(200);
    const [rule] = (await readJson(await h.api(`/v1/apps/${appId}/oidc-rules`, { headers: json(adminKey) }))).data;
    expect(rule.vcsOrigin).toBe('github.com/acme/mobile-app');
    expect((await exchange(mint('circleci', { 'oidc.circleci.com/vcs-origin': 'github.com/mallory/mobile-app' }), appId)).status).toBe(401);
    const [denied] = await deniedReasons(appId);
    expect(denied.rules?.[0].failed?.check).toBe('vcsOrigin');
  });

  it('pins Buildkite\'s organisation id, then refuses another organisation that took the slug', async () => {
    const { appId, adminKey } = await newAppWithRules([RULES.buildkite()]);
    expect((await exchange(mint('buildkite', { organization_id: 'org-first' }), appId)).status).toBe(200);
    const [rule] = (await readJson(await h.api(`/v1/apps/${appId}/oidc-rules`, { headers: json(adminKey) }))).data;
    expect(rule.organizationId).toBe('org-first');
    expect((await exchange(mint('buildkite', { organization_id: 'org-second' }), appId)).status).toBe(401);
  });
});

describe('claim drift', () => {
  it('logs a claim the provider\'s model does not know once, by name, and never its value', async () => {
    const { appId } = await newAppWithRules([RULES.buildkite()]);
    const before = logLines.length;
    for (let i = 0; i < 3; i++) expect((await exchange(mint('buildkite', { brand_new_claim: 'secret-value-xyz' }), appId)).status).toBe(200);
    const drift = logLines.slice(before).filter((line) => line.includes('oidc claim drift'));
    expect(drift).toHaveLength(1);
    expect(JSON.parse(drift[0])).toMatchObject({ provider: 'buildkite', claim: 'brand_new_claim' });
    expect(logLines.join('')).not.toContain('secret-value-xyz');
  });
});
