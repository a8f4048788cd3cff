// Protects: the model of CI providers (src/oidc/providers): each provider's rule refusals (the tenant named first,
// no field of another provider, no rule without a real restriction), its matching on the verified claims (patterns
// never crossing a colon, nor a slash in a GitLab project path; ids compared exactly), the token refusals its
// documentation calls for (merge requests, forks, triggered pipelines, SSH re-runs, a subject its claims do not
// make), the audience forms it may send (Bitbucket alone: exactly its workspace's audience and ours), provenance in
// one shape, which issuers a rule may name (the operator's list, the providers' own hosts and shapes), the issuer key
// registry's bound, and claim drift logged once per provider, claim and day.
import { GITLAB } from '../../src/oidc/providers/gitlab';
import { BUILDKITE } from '../../src/oidc/providers/buildkite';
import { CIRCLECI } from '../../src/oidc/providers/circleci';
import { BITBUCKET } from '../../src/oidc/providers/bitbucket';
import { GITHUB } from '../../src/oidc/providers/github';
import { evaluateRules } from '../../src/oidc/providers/evaluate';
import { judgeOf } from '../../src/oidc/providers/judge';
import type { ProviderModel, RuleConditions, RuleInput } from '../../src/oidc/providers/model';
import { defaultIssuer, issuerAllowed, type IssuerPolicy } from '../../src/oidc/issuers';
import { IssuerKeyRegistry, MAX_CACHED_ISSUERS } from '../../src/oidc/issuer-key-registry';
import { ClaimDrift } from '../../src/oidc/claim-drift';
import { ManualClock } from '../../src/core/clock';
import { gitlabClaims } from '../fixtures/oidc/gitlab';
import { buildkiteClaims } from '../fixtures/oidc/buildkite';
import { circleciClaims, CIRCLECI_CONTEXT_ID, CIRCLECI_ORG_ID, CIRCLECI_PROJECT_ID } from '../fixtures/oidc/circleci';
import { bitbucketClaims, bitbucketWorkspaceAudience, BITBUCKET_REPOSITORY_UUID, BITBUCKET_WORKSPACE_UUID } from '../fixtures/oidc/bitbucket';

const AUD = 'https://api.example.com';
const NOW = new Date('2026-11-29T12:00:00Z');
const GITLAB_ISS = 'https://gitlab.com';
const CIRCLE_ISS = `https://oidc.circleci.com/org/${CIRCLECI_ORG_ID}`;
const BITBUCKET_ISS = 'https://api.bitbucket.org/2.0/workspaces/acme/pipelines-config/identity/oidc';
const base = (issuer: string) => ({ issuer, audience: AUD, now: NOW });
const pointers = (model: ProviderModel, input: Omit<RuleInput, 'scopes'>) => model.ruleErrors({ scopes: ['builds:write'], ...input }).map((e) => e.pointer);
const uuidOf = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
const rule = (fields: Partial<RuleConditions>): RuleConditions => ({ _id: 'rul_x', scopes: ['builds:write'], ...fields });

describe('GitLab', () => {
  const claims = (over: Record<string, unknown> = {}) => gitlabClaims(base(GITLAB_ISS), over);
  const mainRule = rule({ provider: 'gitlab', issuer: GITLAB_ISS, subjectPattern: 'project_path:acme/mobile-app:ref_type:branch:ref:main' });

  it.each([
    ['project_path:acme/mobile-app:ref_type:branch:ref:main', {}],
    ['project_path:acme/sub/mobile-app:ref_type:tag:ref:v*', {}],
    ['project_path:acme/mobile-*:ref_type:branch:ref:release/*', {}],
    ['project_path:acme/app:ref_type:branch:ref:*', { environment: 'production' }],
  ])('accepts %s', (subjectPattern, extra) => {
    expect(pointers(GITLAB, { provider: 'gitlab', subjectPattern, ...extra })).toEqual([]);
  });

  it.each([
    [{ subjectPattern: 'project_path:acme:ref_type:branch:ref:main' }, '/subjectPattern'], // no project
    [{ subjectPattern: 'project_path:ac*/app:ref_type:branch:ref:main' }, '/subjectPattern'], // wildcard group
    [{ subjectPattern: 'project_path:acme/**:ref_type:branch:ref:main' }, '/subjectPattern'],
    [{ subjectPattern: 'project_path:acme/app:ref_type:merge:ref:main' }, '/subjectPattern'],
    [{ subjectPattern: 'project_path:acme/app:ref_type:branch:ref:' }, '/subjectPattern'],
    [{ subjectPattern: 'repo:acme/app:ref:refs/heads/main' }, '/subjectPattern'], // GitHub's shape
    [{ subjectPattern: 'project_path:acme/app:ref_type:branch:ref:main', namespaceId: 'abc' }, '/namespaceId'],
    [{ subjectPattern: 'project_path:acme/app:ref_type:branch:ref:main', configRef: 'gitlab.com/acme/app//.gitlab-ci.yml@main' }, '/configRef'],
    [{ subjectPattern: 'project_path:acme/app:ref_type:branch:ref:main', organizationSlug: 'acme' }, '/organizationSlug'],
    [{ subjectPattern: 'project_path:acme/app:ref_type:branch:ref:main', environment: 'prod*' }, '/environment'],
  ])('refuses %j at %s', (input, pointer) => {
    expect(pointers(GITLAB, { provider: 'gitlab', ...input })).toContain(pointer);
  });

  it('matches on the verified claims: path case-insensitively and segment by segment, ref and ids exactly', () => {
    expect(GITLAB.firstFailure(mainRule, claims())).toBeNull();
    expect(GITLAB.firstFailure(mainRule, claims({ project_path: 'ACME/Mobile-App' }))).toBeNull();
    expect(GITLAB.firstFailure(rule({ ...mainRule, subjectPattern: 'project_path:acme/*:ref_type:branch:ref:main' }), claims({ project_path: 'acme/sub/app' }))?.check).toBe('subjectPattern.projectPath');
    expect(GITLAB.firstFailure(mainRule, claims({ ref: 'main2' }))).toEqual({ check: 'subjectPattern.ref', expected: 'main', actual: 'main2' });
    expect(GITLAB.firstFailure(mainRule, claims({ ref_type: 'tag' }))?.check).toBe('subjectPattern.refType');
    expect(GITLAB.firstFailure({ ...mainRule, projectId: '21' }, claims())).toEqual({ check: 'projectId', expected: '21', actual: '20' });
    expect(GITLAB.firstFailure({ ...mainRule, namespaceId: '72', projectId: '20' }, claims())).toBeNull();
    expect(GITLAB.firstFailure({ ...mainRule, protectedRefOnly: true }, claims({ ref_protected: 'false' }))?.check).toBe('protectedRefOnly');
    expect(GITLAB.firstFailure({ ...mainRule, environment: 'production' }, claims())?.check).toBe('environment');
    const configRef = 'gitlab.com/acme/mobile-app//.gitlab-ci.yml@refs/heads/main';
    expect(GITLAB.firstFailure({ ...mainRule, configRef }, claims())).toBeNull();
    expect(GITLAB.firstFailure({ ...mainRule, configRef }, claims({ ci_config_ref_uri: 'gitlab.com/acme/other//.gitlab-ci.yml@refs/heads/main' }))?.check).toBe('configRef');
  });

  it('refuses merge requests, forks, triggered pipelines on unprotected refs and subjects its claims do not make', () => {
    expect(GITLAB.tokenRefusal(claims())).toBeNull();
    expect(GITLAB.tokenRefusal(claims({ pipeline_source: 'merge_request_event' }))).toBe('pull_request');
    expect(GITLAB.tokenRefusal(claims({ pipeline_source: 'external_pull_request_event' }))).toBe('pull_request');
    expect(GITLAB.tokenRefusal(claims({ job_project_id: '666' }))).toBe('pull_request');
    expect(GITLAB.tokenRefusal(claims({ pipeline_source: 'parent_pipeline', ref_protected: 'false' }))).toBe('untrusted_trigger');
    expect(GITLAB.tokenRefusal(claims({ pipeline_source: 'pipeline', ref_protected: 'true' }))).toBeNull();
    expect(GITLAB.tokenRefusal(claims({ sub: 'project_path:acme/other:ref_type:branch:ref:main' }))).toBe('subject_mismatch');
    expect(GITLAB.tokenRefusal(claims({ sub: 'repo:acme/mobile-app:ref:refs/heads/main' }))).toBe('subject_unrecognized');
  });

  it('records provenance with full refs, and pins namespace and project on first use', () => {
    const c = claims({ ref: 'v1.2', ref_type: 'tag' });
    expect(GITLAB.provenance(c)).toMatchObject({ provider: 'gitlab', repository: 'acme/mobile-app', repositoryId: '20', ref: 'refs/tags/v1.2', runId: c.pipeline_id, eventName: 'push' });
    expect(GITLAB.pinsOf(mainRule, claims())).toEqual({ owner: { field: 'namespaceId', value: '72' }, project: { field: 'projectId', value: '20' } });
    expect(GITLAB.pinsOf({ ...mainRule, subjectPattern: 'project_path:acme/mobile-*:ref_type:branch:ref:main' }, claims())?.project).toBeNull();
  });
});

describe('Buildkite', () => {
  const claims = (over: Record<string, unknown> = {}) => buildkiteClaims(base('https://agent.buildkite.com'), over);
  const mainRule = rule({ provider: 'buildkite', organizationSlug: 'acme', pipelineSlug: 'mobile-app', branch: 'main' });

  it('requires the organisation and a real restriction, and refuses other providers\' fields', () => {
    expect(pointers(BUILDKITE, { provider: 'buildkite', organizationSlug: 'acme', pipelineSlug: 'mobile-*' })).toEqual([]);
    expect(pointers(BUILDKITE, { provider: 'buildkite', organizationSlug: 'acme', branch: 'main' })).toEqual([]);
    expect(pointers(BUILDKITE, { provider: 'buildkite', pipelineSlug: 'app' })).toContain('/organizationSlug');
    expect(pointers(BUILDKITE, { provider: 'buildkite', organizationSlug: 'Acme Inc', pipelineSlug: 'app' })).toContain('/organizationSlug');
    expect(pointers(BUILDKITE, { provider: 'buildkite', organizationSlug: 'acme' })).toContain('/pipelineSlug');
    expect(pointers(BUILDKITE, { provider: 'buildkite', organizationSlug: 'acme', pipelineSlug: '*' })).toContain('/pipelineSlug');
    expect(pointers(BUILDKITE, { provider: 'buildkite', organizationSlug: 'acme', pipelineSlug: 'app', branch: 'a:b' })).toContain('/branch');
    expect(pointers(BUILDKITE, { provider: 'buildkite', organizationSlug: 'acme', pipelineSlug: 'app', projectId: '1' })).toContain('/projectId');
  });

  it('matches organisation exactly, pipeline and branch by pattern; a fork\'s owner:branch never', () => {
    expect(BUILDKITE.firstFailure(mainRule, claims())).toBeNull();
    expect(BUILDKITE.firstFailure(mainRule, claims({ organization_slug: 'acme-evil' }))?.check).toBe('organizationSlug');
    expect(BUILDKITE.firstFailure({ ...mainRule, pipelineSlug: 'mobile-*' }, claims())).toBeNull();
    expect(BUILDKITE.firstFailure({ ...mainRule, branch: '*' }, claims({ build_branch: 'mallory:main' }))?.check).toBe('branch');
    expect(BUILDKITE.tokenRefusal(claims({ build_branch: 'mallory:main' }))).toBe('pull_request');
  });

  it('refuses builds another pipeline triggered, and pins the organisation\'s id on first use', () => {
    expect(BUILDKITE.tokenRefusal(claims({ build_source: 'trigger_job' }))).toBe('untrusted_trigger');
    expect(BUILDKITE.tokenRefusal(claims({ build_source: 'api' }))).toBeNull();
    expect(BUILDKITE.pinsOf(mainRule, claims())).toBeNull(); // the default token has no organisation id
    expect(BUILDKITE.pinsOf(mainRule, claims({ organization_id: 'org-1' }))).toEqual({ owner: { field: 'organizationId', value: 'org-1' }, project: null });
    expect(BUILDKITE.firstFailure({ ...mainRule, organizationId: 'org-1' }, claims({ organization_id: 'org-2' }))?.check).toBe('organizationId');
    expect(BUILDKITE.firstFailure({ ...mainRule, organizationId: 'org-1' }, claims())?.check).toBe('organizationId');
  });

  it('checks the subject Buildkite makes, tags and a missing step key included', () => {
    expect(BUILDKITE.tokenRefusal(claims())).toBeNull();
    expect(BUILDKITE.tokenRefusal(claims({ build_tag: 'v1.0', build_branch: 'v1.0' }))).toBeNull();
    expect(BUILDKITE.tokenRefusal(claims({ step_key: null }))).toBeNull();
    const c = claims();
    expect(BUILDKITE.tokenRefusal({ ...c, sub: String(c.sub).replace('organization:acme', 'organization:other') })).toBe('subject_mismatch');
    expect(BUILDKITE.provenance(claims({ build_tag: 'v2' }))).toMatchObject({ provider: 'buildkite', repository: 'acme/mobile-app', ref: 'refs/tags/v2', eventName: 'webhook' });
  });
});

describe('CircleCI', () => {
  const claims = (over: Record<string, unknown> = {}) => circleciClaims(base(CIRCLE_ISS), over);
  const projectRule = rule({ provider: 'circleci', issuer: CIRCLE_ISS, projectId: CIRCLECI_PROJECT_ID });

  it('requires the project by id; contexts are ids too', () => {
    expect(pointers(CIRCLECI, { provider: 'circleci', projectId: CIRCLECI_PROJECT_ID, contextIds: [CIRCLECI_CONTEXT_ID], branch: 'main' })).toEqual([]);
    expect(pointers(CIRCLECI, { provider: 'circleci' })).toContain('/projectId');
    expect(pointers(CIRCLECI, { provider: 'circleci', projectId: 'mobile-app' })).toContain('/projectId');
    expect(pointers(CIRCLECI, { provider: 'circleci', projectId: CIRCLECI_PROJECT_ID, contextIds: ['prod'] })).toContain('/contextIds/0');
    // The project alone admits every job of it: a branch or a context must narrow it.
    expect(pointers(CIRCLECI, { provider: 'circleci', projectId: CIRCLECI_PROJECT_ID })).toEqual(['/branch']);
    expect(pointers(CIRCLECI, { provider: 'circleci', projectId: CIRCLECI_PROJECT_ID, branch: '*' })).toEqual(['/branch']);
  });

  it('refuses a fork\'s pull request (its ref, its repository once pinned) and never builds a pattern from claims', () => {
    expect(CIRCLECI.tokenRefusal(claims({ 'oidc.circleci.com/vcs-ref': 'refs/pull/42/head' }))).toBe('pull_request');
    expect(CIRCLECI.pinsOf(projectRule, claims())).toEqual({ owner: { field: 'vcsOrigin', value: 'github.com/acme/mobile-app' }, project: null });
    expect(CIRCLECI.firstFailure({ ...projectRule, vcsOrigin: 'github.com/acme/mobile-app' }, claims({ 'oidc.circleci.com/vcs-origin': 'github.com/mallory/mobile-app' }))?.check).toBe('vcsOrigin');
    // A dry-run's pasted project id is text, never a regular expression: a catastrophic pattern answers at once.
    const started = process.hrtime.bigint();
    const hostile = { ...claims(), 'oidc.circleci.com/project-id': '(.*a){8}', sub: `org/${CIRCLECI_ORG_ID}/project/${'a'.repeat(8000)}!` };
    expect(CIRCLECI.tokenRefusal(hostile)).toBe('malformed');
    expect(CIRCLECI.tokenRefusal({ ...claims(), 'oidc.circleci.com/project-id': '(' })).toBe('malformed');
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(1000); // a backtracking pattern would take minutes
  });

  it('matches project, every listed context and the branch', () => {
    expect(CIRCLECI.firstFailure(projectRule, claims())).toBeNull();
    expect(CIRCLECI.firstFailure({ ...projectRule, contextIds: [CIRCLECI_CONTEXT_ID] }, claims())).toBeNull();
    expect(CIRCLECI.firstFailure({ ...projectRule, contextIds: [CIRCLECI_CONTEXT_ID] }, claims({ 'oidc.circleci.com/context-ids': [] }))?.check).toBe('contextIds');
    expect(CIRCLECI.firstFailure({ ...projectRule, branch: 'main' }, claims({ 'oidc.circleci.com/vcs-ref': 'refs/tags/v1' }))?.check).toBe('branch');
    expect(CIRCLECI.firstFailure(projectRule, claims({ 'oidc.circleci.com/project-id': '00000000-0000-4000-8000-000000000000' }))?.check).toBe('projectId');
  });

  it('refuses SSH re-runs, another organisation than the issuer\'s, and a subject its claims do not make', () => {
    expect(CIRCLECI.tokenRefusal(claims())).toBeNull();
    expect(CIRCLECI.tokenRefusal(claims({ 'oidc.circleci.com/ssh-rerun': true }))).toBe('untrusted_trigger');
    expect(CIRCLECI.tokenRefusal(claims({ 'oidc.circleci.com/ssh-rerun': 'maybe' }))).toBe('malformed');
    expect(CIRCLECI.tokenRefusal(claims({ 'oidc.circleci.com/org-id': '00000000-0000-4000-8000-000000000000' }))).toBe('subject_mismatch');
    expect(CIRCLECI.tokenRefusal(claims({ 'oidc.circleci.com/vcs-ref': undefined, 'oidc.circleci.com/vcs-origin': undefined }))).toBeNull(); // the older subject
    const c = claims();
    expect(CIRCLECI.tokenRefusal({ ...c, 'oidc.circleci.com/vcs-ref': 'refs/heads/other' })).toBe('subject_mismatch');
    expect(CIRCLECI.tokenRefusal({ ...c, sub: 'anything' })).toBe('subject_unrecognized');
  });
});

describe('Bitbucket', () => {
  const claims = (over: Record<string, unknown> = {}) => bitbucketClaims(base(BITBUCKET_ISS), over);
  const repoRule = rule({ provider: 'bitbucket', issuer: BITBUCKET_ISS, workspaceUuid: BITBUCKET_WORKSPACE_UUID, repositoryUuid: BITBUCKET_REPOSITORY_UUID });

  it('requires workspace and repository UUIDs in braces', () => {
    expect(pointers(BITBUCKET, { provider: 'bitbucket', workspaceUuid: BITBUCKET_WORKSPACE_UUID, repositoryUuid: BITBUCKET_REPOSITORY_UUID, branch: 'main' })).toEqual([]);
    expect(pointers(BITBUCKET, { provider: 'bitbucket', workspaceUuid: BITBUCKET_WORKSPACE_UUID, repositoryUuid: BITBUCKET_REPOSITORY_UUID, deploymentEnvironmentUuid: '{11111111-1111-4111-8111-111111111111}' })).toEqual([]);
    // The repository alone admits its pull-request pipelines too.
    expect(pointers(BITBUCKET, { provider: 'bitbucket', workspaceUuid: BITBUCKET_WORKSPACE_UUID, repositoryUuid: BITBUCKET_REPOSITORY_UUID })).toEqual(['/branch']);
    expect(pointers(BITBUCKET, { provider: 'bitbucket', workspaceUuid: BITBUCKET_WORKSPACE_UUID })).toContain('/repositoryUuid');
    expect(pointers(BITBUCKET, { provider: 'bitbucket', workspaceUuid: 'acme', repositoryUuid: BITBUCKET_REPOSITORY_UUID })).toContain('/workspaceUuid');
  });

  it('accepts exactly its workspace\'s audience and ours, as a list, or ours alone', () => {
    const c = claims();
    const fixed = bitbucketWorkspaceAudience(BITBUCKET_WORKSPACE_UUID);
    expect(BITBUCKET.token.audience([fixed, AUD], AUD, c)).toBe(true);
    expect(BITBUCKET.token.audience([AUD, fixed], AUD, c)).toBe(true);
    expect(BITBUCKET.token.audience(AUD, AUD, c)).toBe(true);
    expect(BITBUCKET.token.audience(fixed, AUD, c)).toBe(false);
    expect(BITBUCKET.token.audience([fixed, AUD, 'https://other.example'], AUD, c)).toBe(false);
    expect(BITBUCKET.token.audience([bitbucketWorkspaceAudience('{00000000-0000-4000-8000-000000000000}'), AUD], AUD, c)).toBe(false);
    expect(GITLAB.token.audience([AUD], AUD, c)).toBe(false); // everyone else: our string only
  });

  it('matches UUIDs exactly and the branch by pattern; checks the subject Bitbucket makes', () => {
    expect(BITBUCKET.firstFailure(repoRule, claims())).toBeNull();
    expect(BITBUCKET.firstFailure({ ...repoRule, branch: 'release/*' }, claims())?.check).toBe('branch');
    expect(BITBUCKET.firstFailure({ ...repoRule, deploymentEnvironmentUuid: '{11111111-1111-4111-8111-111111111111}' }, claims())?.check).toBe('deploymentEnvironmentUuid');
    expect(BITBUCKET.tokenRefusal(claims())).toBeNull();
    expect(BITBUCKET.tokenRefusal(claims({ deploymentEnvironmentUuid: '{11111111-1111-4111-8111-111111111111}' }))).toBeNull();
    expect(BITBUCKET.tokenRefusal({ ...claims(), sub: `${BITBUCKET_REPOSITORY_UUID}:{22222222-2222-4222-8222-222222222222}` })).toBe('subject_mismatch');
    expect(BITBUCKET.provenance(claims())).toMatchObject({ provider: 'bitbucket', repositoryId: BITBUCKET_REPOSITORY_UUID, ref: 'refs/heads/main', sha: null });
  });
});

describe('every provider', () => {
  const tokens: Array<[ProviderModel, string, Record<string, unknown>, RuleConditions]> = [
    [GITLAB, GITLAB_ISS, gitlabClaims(base(GITLAB_ISS)), rule({ provider: 'gitlab', issuer: GITLAB_ISS, subjectPattern: 'project_path:acme/mobile-app:ref_type:branch:ref:main' })],
    [BUILDKITE, 'https://agent.buildkite.com', buildkiteClaims(base('https://agent.buildkite.com')), rule({ provider: 'buildkite', issuer: 'https://agent.buildkite.com', organizationSlug: 'acme', pipelineSlug: 'mobile-app' })],
    [CIRCLECI, CIRCLE_ISS, circleciClaims(base(CIRCLE_ISS)), rule({ provider: 'circleci', issuer: CIRCLE_ISS, projectId: CIRCLECI_PROJECT_ID })],
    [BITBUCKET, BITBUCKET_ISS, bitbucketClaims(base(BITBUCKET_ISS)), rule({ provider: 'bitbucket', issuer: BITBUCKET_ISS, workspaceUuid: BITBUCKET_WORKSPACE_UUID, repositoryUuid: BITBUCKET_REPOSITORY_UUID })],
  ];
  const GH = 'https://token.actions.githubusercontent.com';

  it('matches its own rule, and no rule of another issuer or provider (the evaluator checks the issuer first)', () => {
    const rules = tokens.map(([, , , r], i) => ({ ...r, _id: `rul_${i}` }));
    tokens.forEach(([model, issuer, claims], i) => {
      const evaluation = evaluateRules(model, issuer, GH, rules, claims);
      expect(evaluation.matched.map((r) => r._id)).toEqual([`rul_${i}`]);
      for (const outcome of evaluation.rules.filter((o) => o.id !== `rul_${i}`)) expect(outcome.failed?.check).toBe('issuer');
    });
    // The same claims judged under another issuer match nothing.
    expect(evaluateRules(GITLAB, 'https://gitlab.example.com', GH, rules, tokens[0][2]).matches).toBe(false);
  });

  it('declares each claim of its documented token as required, read or ignored (no drift on its own fixture)', () => {
    for (const [model, , claims] of tokens) {
      const known = new Set(['iss', 'sub', 'aud', 'exp', 'nbf', 'iat', 'jti', ...model.requiredClaims, ...model.optionalClaims, ...model.ignoredClaims]);
      expect({ provider: model.id, unknown: Object.keys(claims).filter((name) => !known.has(name)) }).toEqual({ provider: model.id, unknown: [] });
    }
  });
});

describe('issuers a rule may name', () => {
  const policy: IssuerPolicy = { githubIssuer: 'https://token.actions.githubusercontent.com', allowedIssuers: ['https://gitlab.example.com'] };

  it('allows each provider\'s own issuer and shapes, and otherwise only what the operator lists', () => {
    expect(defaultIssuer('gitlab', policy)).toBe('https://gitlab.com');
    expect(defaultIssuer('buildkite', policy)).toBe('https://agent.buildkite.com');
    expect(defaultIssuer('circleci', policy)).toBeNull();
    expect(issuerAllowed('gitlab', 'https://gitlab.example.com', policy)).toBe(true);
    expect(issuerAllowed('gitlab', 'https://gitlab.evil.example', policy)).toBe(false);
    expect(issuerAllowed('circleci', CIRCLE_ISS, policy)).toBe(true);
    expect(issuerAllowed('circleci', 'https://oidc.circleci.com', policy)).toBe(false);
    expect(issuerAllowed('circleci', `https://oidc.circleci.com/org/${CIRCLECI_ORG_ID}/`, policy)).toBe(false);
    expect(issuerAllowed('bitbucket', BITBUCKET_ISS, policy)).toBe(true);
    expect(issuerAllowed('bitbucket', 'https://evil.example/2.0/workspaces/acme/pipelines-config/identity/oidc', policy)).toBe(false);
    expect(issuerAllowed('gitlab', policy.githubIssuer, policy)).toBe(false); // GitHub's tokens are GitHub's model's
    expect(issuerAllowed('github', 'https://gitlab.com', policy)).toBe(false);
  });

  it('chooses the judge by the rule that names the issuer, or none', () => {
    const rules = [rule({ provider: 'gitlab', issuer: 'https://gitlab.example.com', subjectPattern: 'x' })];
    expect(judgeOf(rules, 'https://gitlab.example.com', policy)?.model.id).toBe('gitlab');
    expect(judgeOf(rules, null, policy)?.model).toBe(GITHUB);
    expect(judgeOf(rules, 'https://gitlab.com', policy)).toBeNull();
    // A rule whose issuer the operator stopped allowing no longer opens it.
    expect(judgeOf(rules, 'https://gitlab.example.com', { ...policy, allowedIssuers: [] })).toBeNull();
  });
});

describe('IssuerKeyRegistry', () => {
  it('keeps one key set per issuer, forgetting the least recently used past its bound', () => {
    const registry = new IssuerKeyRegistry(new ManualClock(NOW));
    const first = registry.keysOf('https://a.example');
    expect(registry.keysOf('https://a.example')).toBe(first);
    const sets = new Map<number, unknown>();
    for (let i = 0; i < MAX_CACHED_ISSUERS; i++) {
      sets.set(i, registry.keysOf(`https://issuer-${i}.example`));
      if (i === 10) registry.keysOf('https://a.example'); // used again: not the oldest any more
    }
    expect(registry.size).toBe(MAX_CACHED_ISSUERS);
    expect(registry.keysOf('https://a.example')).toBe(first); // kept
    expect(registry.keysOf('https://issuer-0.example')).not.toBe(sets.get(0)); // the oldest was forgotten: a new set
    expect(registry.size).toBe(MAX_CACHED_ISSUERS);
  });

  it('never forgets the operator\'s issuers, however many others are named', () => {
    const registry = new IssuerKeyRegistry(new ManualClock(NOW), ['https://gitlab.com']);
    const gitlab = registry.keysOf('https://gitlab.com');
    for (let i = 0; i < MAX_CACHED_ISSUERS * 2; i++) registry.keysOf(`https://oidc.circleci.com/org/${uuidOf(i)}`);
    expect(registry.keysOf('https://gitlab.com')).toBe(gitlab);
    expect(registry.size).toBe(MAX_CACHED_ISSUERS);
  });
});

describe('ClaimDrift', () => {
  it('logs an unknown claim once per provider, claim and day, by its name only', () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = { warn: (fields: Record<string, unknown>) => lines.push(fields) } as never;
    const drift = new ClaimDrift();
    const claims = { ...gitlabClaims(base(GITLAB_ISS)), new_claim: 'value' };
    drift.observe(GITLAB, claims, NOW, logger);
    drift.observe(GITLAB, claims, NOW, logger);
    drift.observe(BUILDKITE, { new_claim: 1 }, NOW, logger);
    expect(lines).toEqual([
      { provider: 'gitlab', claim: 'new_claim' },
      { provider: 'buildkite', claim: 'new_claim' },
    ]);
    drift.observe(GITLAB, claims, new Date(NOW.getTime() + 86_400_000), logger);
    expect(lines).toHaveLength(3);
  });

  it('bounds each provider apart: one provider\'s flood of invented names silences only its own', () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = { warn: (fields: Record<string, unknown>) => lines.push(fields) } as never;
    const drift = new ClaimDrift();
    drift.observe(BUILDKITE, Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`agent_tag:${i}`, 'x'])), NOW, logger);
    const buildkiteLines = lines.length;
    expect(buildkiteLines).toBeLessThan(2000);
    drift.observe(GITLAB, { new_claim: 'x' }, NOW, logger);
    expect(lines.slice(buildkiteLines)).toEqual([{ provider: 'gitlab', claim: 'new_claim' }]);
  });
});
