// Protects: POST /v1/apps/{id}/oidc-rules/dry-run (docs/contract.md, "Trust rules"): with rules:read, decoded claims are
// judged by the very evaluator the exchange runs (same matches, scopes and per-rule first failing check as the audit
// of a real exchange of a GitHub-shaped token with those claims); nothing is minted, no jti is claimed; an
// `oidc.dry_run` audit entry is recorded; a body holding anything shaped like a compact JWS is 422 telling the user
// never to paste tokens, and the token is stored nowhere; scopes and tenants are enforced; staff get the same answer
// over GraphQL.
import { randomInt } from 'node:crypto';
import { startHarness, bearer, json, type Harness } from '../support/harness';
import { startOidcIssuer, type OidcIssuer } from '../support/oidc-issuer';

const readJson = (res: Response): Promise<any> => res.json();
let issuer: OidcIssuer;
let h: Harness;

beforeAll(async () => {
  issuer = await startOidcIssuer();
  h = await startHarness({ env: { OIDC_ISSUER: issuer.url, OIDC_ALLOW_INSECURE_ISSUER: 'on' } });
  issuer.bind({ audience: h.baseUrl, now: () => h.clock.now() });
});
afterAll(async () => {
  await h.close();
  await issuer.close();
});

const RELEASE = 'acme/mobile-app/.github/workflows/release.yml@refs/heads/main';

async function appWithRules() {
  const { appId } = await h.newApp('startup');
  const admin = await h.newKey(appId, ['rules:write', 'rules:read']);
  const rules = [
    { subjectPattern: 'repo:acme/mobile-app:ref:refs/heads/main', workflowRef: RELEASE, events: ['push', 'workflow_dispatch'], scopes: ['builds:write'] },
    { subjectPattern: 'repo:acme/mobile-app:environment:production', environment: 'production', scopes: ['builds:read'] },
  ];
  const ids: string[] = [];
  for (const rule of rules) {
    const res = await h.api(`/v1/apps/${appId}/oidc-rules`, { method: 'POST', headers: json(admin.key), body: JSON.stringify(rule) });
    expect(res.status).toBe(201);
    ids.push((await readJson(res)).id);
    h.clock.advance(1000);
  }
  return { appId, key: admin.key, ids };
}

const dryRun = (appId: string, key: string, body: unknown) =>
  h.api(`/v1/apps/${appId}/oidc-rules/dry-run`, { method: 'POST', headers: json(key), body: JSON.stringify(body) });

const exchange = (token: string, appId: string) =>
  h.api('/v1/auth/oidc', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.9.${randomInt(256)}.${randomInt(1, 255)}` },
    body: JSON.stringify({ token, appId }),
  });

it('answers what the exchange does, rule by rule, for the same claims', async () => {
  const { appId, key, ids } = await appWithRules();
  const cases: Array<Record<string, unknown>> = [{}, { event_name: 'release' }, { environment: 'production' }, { ref: 'refs/heads/dev' }, { event_name: 'pull_request' }];
  for (const overrides of cases) {
    h.clock.advance(1000); // the newest audit entry is this case's
    const claims = issuer.githubClaims(overrides);
    const res = await dryRun(appId, key, { claims });
    expect(res.status).toBe(200);
    const answer = await readJson(res);
    const exchanged = await exchange(issuer.sign(claims), appId);
    expect({ overrides, matches: answer.matches }).toEqual({ overrides, matches: exchanged.status === 200 });
    if (exchanged.status === 200) {
      expect(answer.scopes).toEqual((await readJson(exchanged)).scopes);
    } else {
      const [denied] = (await h.deps.repos.audit.list(appId, { limit: 1, action: 'oidc.denied' })).data;
      expect({ overrides, rules: answer.rules, reason: answer.reason ?? 'not_trusted' }).toEqual({ overrides, rules: denied.rules, reason: denied.reason });
    }
  }
  const res = await dryRun(appId, key, { claims: issuer.githubClaims({ event_name: 'release' }) });
  expect(await readJson(res)).toEqual({
    matches: false,
    scopes: [],
    reason: null,
    rules: [
      { id: ids[0], matched: false, failed: { check: 'events', expected: 'push, workflow_dispatch', actual: 'release' } },
      { id: ids[1], matched: false, failed: { check: 'subjectPattern.environment', expected: 'production', actual: null } },
    ],
  });
});

it('mints nothing, claims no jti, and records oidc.dry_run', async () => {
  const { appId, key } = await appWithRules();
  const claims = issuer.githubClaims();
  const answer = await readJson(await dryRun(appId, key, { claims }));
  expect(answer).toMatchObject({ matches: true, scopes: ['builds:write'] });
  const [entry] = (await h.deps.repos.audit.list(appId, { limit: 1, action: 'oidc.dry_run' })).data;
  expect(entry).toMatchObject({ subject: claims.sub, claims: { repository: 'acme/mobile-app', event_name: 'push' }, details: { matches: true, scopes: 'builds:write' } });
  expect(entry.rules).toEqual(answer.rules);
  // One entry per caller, outcome and minute, counting the calls: a rules:read key cannot fill the trail with claims
  // it chose, nor hide refused tries behind a matching one.
  for (let i = 0; i < 3; i++) expect((await readJson(await dryRun(appId, key, { claims: { ...claims, sub: `repo:junk/x${i}:ref:refs/heads/main` } }))).matches).toBe(false);
  expect((await dryRun(appId, key, { claims })).status).toBe(200);
  // Newest first; the two entries of one instant in either order.
  const entries = async () => (await h.deps.repos.audit.list(appId, { limit: 10, action: 'oidc.dry_run' })).data.map((e) => [e.details.matches, e.count, e.subject]);
  const bySubject = (rows: unknown[][]) => [...rows].sort((a, b) => String(a[2]).localeCompare(String(b[2])));
  expect(bySubject(await entries())).toEqual([
    [true, 2, claims.sub],
    [false, 3, 'repo:junk/x0:ref:refs/heads/main'],
  ]);
  h.clock.advance(60_000);
  expect((await dryRun(appId, key, { claims })).status).toBe(200);
  const [newest, ...older] = await entries();
  expect(newest).toEqual([true, 1, claims.sub]);
  expect(bySubject(older).map(([, count]) => count)).toEqual([2, 3]);
  // The same jti can still be exchanged once: the dry-run claimed nothing.
  expect((await exchange(issuer.sign(claims), appId)).status).toBe(200);
  expect((await exchange(issuer.sign(claims), appId)).status).toBe(401);
});

it('refuses a body holding a token with 422, saying never to paste tokens, and stores it nowhere', async () => {
  const { appId, key } = await appWithRules();
  const token = issuer.mint();
  for (const body of [
    { claims: { sub: token } },
    { claims: { ...issuer.githubClaims(), note: `Bearer ${token}` } },
    { claims: { nested: { deeper: [token] } } },
    { claims: { [token]: 'x' } },
  ]) {
    const res = await dryRun(appId, key, body);
    expect(res.status).toBe(422);
    const problem = await readJson(res);
    expect(problem.detail).toMatch(/never paste a token/i);
    expect(problem.errors[0].message).toMatch(/never paste tokens/);
    expect(JSON.stringify(problem)).not.toContain(token.split('.')[2]);
  }
  const unshaped = await dryRun(appId, key, { token }); // not even the contract's shape
  expect(unshaped.status).toBe(422);
  expect(await unshaped.text()).not.toContain(token.split('.')[2]);
  const stored = JSON.stringify(await h.deps.db.collection('audit_events').find({ appId }).toArray());
  expect(stored).not.toContain(token.split('.')[1]);
  // Dotted values that are not tokens are fine (versions, workflow paths).
  const fine = await dryRun(appId, key, { claims: issuer.githubClaims({ ref: 'refs/tags/v1.2.3' }) });
  expect(fine.status).toBe(200);
});

it('needs rules:read on the same app', async () => {
  const { appId } = await appWithRules();
  const writer = await h.newKey(appId, ['builds:write']);
  expect((await dryRun(appId, writer.key, { claims: {} })).status).toBe(403);
  const other = await appWithRules();
  expect((await dryRun(appId, other.key, { claims: {} })).status).toBe(404);
});

it('gives staff the same answer over GraphQL', async () => {
  const { appId, key } = await appWithRules();
  const claims = issuer.githubClaims({ environment: 'production' });
  const rest = await readJson(await dryRun(appId, key, { claims }));
  const support = await h.newStaff('support');
  const pairs = Object.entries(claims).map(([name, value]) => ({ name, value: typeof value === 'string' ? value : JSON.stringify(value) }));
  const res = await h.api('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...bearer(support) },
    body: JSON.stringify({
      query: 'query($a: ID!, $c: [ClaimInput!]!) { dryRunOidcRules(appId: $a, claims: $c) { matches scopes reason rules { id matched failed { check expected actual } } } }',
      variables: { a: appId, c: pairs },
    }),
  });
  const body = await readJson(res);
  expect(body.errors).toBeUndefined();
  expect(body.data.dryRunOidcRules).toEqual(rest);
  // The job runs on main in the production environment: both rules hold.
  expect(rest).toMatchObject({ matches: true, scopes: ['builds:write', 'builds:read'] });
});
