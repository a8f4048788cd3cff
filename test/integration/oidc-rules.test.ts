// Protects: trust rules under /v1/apps/{id}/oidc-rules (docs/contract.md, "Trust rules"; spec Authentication rule 6):
// create (rules:write) 201, list (rules:read) oldest first, delete (rules:write) 204; refusals as 422 with field
// errors (wildcard owner, `*` repository, no real restriction, device or rules scopes, a pull-request event in
// `events`, more than 8 `*` in a pattern, more than 20 rules, also
// under concurrent creation); another app's id 404; missing scope 403; audit entries oidc.rule_created and
// oidc.rule_deleted; the same operations for staff over GraphQL (support reads, admin writes).
import { startHarness, bearer, json, type Harness } from '../support/harness';

// Response bodies are read as any: each test states the shape it expects.
/** The fields of other providers' rules, null on a GitHub rule. */
const OTHER_PROVIDERS_FIELDS = {
  namespaceId: null,
  projectId: null,
  configRef: null,
  protectedRefOnly: null,
  organizationSlug: null,
  pipelineSlug: null,
  branch: null,
  contextIds: null,
  vcsOrigin: null,
  organizationId: null,
  workspaceUuid: null,
  repositoryUuid: null,
  deploymentEnvironmentUuid: null,
};
const readJson = (res: Response): Promise<any> => res.json();
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h.close());

const MAIN = { subjectPattern: 'repo:acme/mobile-app:ref:refs/heads/main', scopes: ['builds:write', 'builds:read'] };

async function ownedApp() {
  const { appId } = await h.newApp();
  const { key } = await h.newKey(appId, ['rules:write', 'rules:read']);
  return { appId, key };
}

const create = (appId: string, key: string, body: unknown) =>
  h.api(`/v1/apps/${appId}/oidc-rules`, { method: 'POST', headers: json(key), body: JSON.stringify(body) });
const list = (appId: string, key: string) => h.api(`/v1/apps/${appId}/oidc-rules`, { headers: bearer(key) });
const remove = (appId: string, key: string, ruleId: string) => h.api(`/v1/apps/${appId}/oidc-rules/${ruleId}`, { method: 'DELETE', headers: bearer(key) });

function gql(token: string, query: string, variables: Record<string, unknown>) {
  return h.api('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(token) }, body: JSON.stringify({ query, variables }) });
}

it('creates, lists (oldest first) and deletes rules, auditing each change', async () => {
  const { appId, key } = await ownedApp();
  const full = {
    subjectPattern: 'repo:acme/mobile-app:environment:production',
    workflowRef: 'acme/mobile-app/.github/workflows/release.yml@refs/heads/main',
    environment: 'production',
    scopes: ['builds:write'],
    repositoryId: '123456789',
    repositoryOwnerId: '4242',
    events: ['push', 'release', 'workflow_dispatch'],
  };
  const first = await create(appId, key, MAIN);
  expect(first.status).toBe(201);
  const a = await readJson(first);
  expect(a).toEqual({
    id: expect.stringMatching(/^rul_/),
    appId,
    provider: 'github',
    issuer: h.deps.config.oidcIssuer,
    ...MAIN,
    workflowRef: null,
    environment: null,
    repositoryId: null,
    repositoryOwnerId: null,
    events: null,
    releaseBuilds: false,
    ...OTHER_PROVIDERS_FIELDS,
    createdAt: h.clock.now().toISOString(),
  });
  h.clock.advance(1000);
  const b = await readJson(await create(appId, key, full));
  expect(b).toMatchObject(full);

  const listed = await list(appId, key);
  expect(listed.status).toBe(200);
  expect((await readJson(listed)).data.map((r: { id: string }) => r.id)).toEqual([a.id, b.id]);

  h.clock.advance(1000);
  expect((await remove(appId, key, a.id)).status).toBe(204);
  expect((await remove(appId, key, a.id)).status).toBe(404);
  expect((await readJson(await list(appId, key))).data.map((r: { id: string }) => r.id)).toEqual([b.id]);

  // The app's trail also holds its creation and its keys' (by the operator): the rule changes are these.
  const audit = (await h.deps.repos.audit.list(appId, { limit: 10 })).data.filter((e) => e.action.startsWith('oidc.'));
  expect(audit.map((e) => [e.action, e.ruleId])).toEqual([
    ['oidc.rule_deleted', a.id],
    ['oidc.rule_created', b.id],
    ['oidc.rule_created', a.id],
  ]);
});

it.each([
  ['a wildcard owner', { subjectPattern: 'repo:*/mobile-app:ref:refs/heads/main' }, '/subjectPattern', 'wildcard repository owner'],
  ['a * repository', { subjectPattern: 'repo:acme/*:ref:refs/heads/main' }, '/subjectPattern', 'only *'],
  ['a pattern ending in :*', { subjectPattern: 'repo:acme/mobile-app:*' }, '/subjectPattern', 'no real restriction'],
  ['any branch without workflow or environment', { subjectPattern: 'repo:acme/mobile-app:ref:refs/heads/*' }, '/subjectPattern', 'no real restriction'],
  ['any environment', { subjectPattern: 'repo:acme/mobile-app:environment:*' }, '/subjectPattern', 'no real restriction'],
  ['a device scope', { scopes: ['attest:verify'] }, '/scopes/0', ''],
  ['a device scope (events)', { scopes: ['builds:read', 'events:ingest'] }, '/scopes/1', ''],
  ['a rules scope', { scopes: ['rules:write'] }, '/scopes/0', ''],
  ['a pull_request event', { events: ['push', 'pull_request'] }, '/events/1', 'pull-request'],
  ['a pull_request_target event', { events: ['pull_request_target'] }, '/events/0', 'pull-request'],
  ['a pattern with 9 *', { subjectPattern: 'repo:acme/mobile-app:ref:refs/tags/v*.*.*-*-*-*-*-*-*' }, '/subjectPattern', 'at most 8 *'],
  ['a wildcard workflowRef', { workflowRef: 'acme/mobile-app/.github/workflows/*.yml@refs/heads/main' }, '/workflowRef', 'no wildcard'],
])('refuses %s with 422 and a field error', async (_label, patch, pointer, message) => {
  const { appId, key } = await ownedApp();
  const res = await create(appId, key, { ...MAIN, ...patch });
  expect(res.status).toBe(422);
  const problem = await readJson(res);
  expect(problem.code).toBe('validation_failed');
  expect(problem.errors).toEqual(expect.arrayContaining([{ pointer, message: expect.stringContaining(message) }]));
  expect((await readJson(await list(appId, key))).data).toEqual([]);
});

it('accepts a broad pattern when workflowRef or environment restricts it', async () => {
  const { appId, key } = await ownedApp();
  expect((await create(appId, key, { ...MAIN, subjectPattern: 'repo:acme/mobile-app:ref:refs/heads/*', workflowRef: 'acme/mobile-app/.github/workflows/release.yml@refs/heads/main' })).status).toBe(201);
  expect((await create(appId, key, { ...MAIN, subjectPattern: 'repo:acme/mobile-app:environment:*', environment: 'production' })).status).toBe(201);
});

it('refuses a 21st rule, also when 25 creations race', async () => {
  const { appId, key } = await ownedApp();
  const statuses = await Promise.all(Array.from({ length: 25 }, (_, i) => create(appId, key, { ...MAIN, subjectPattern: `repo:acme/app-${i}:ref:refs/heads/main` }).then((r) => r.status)));
  expect(statuses.filter((s) => s === 201)).toHaveLength(20);
  expect(statuses.filter((s) => s === 422)).toHaveLength(5);
  expect((await readJson(await list(appId, key))).data).toHaveLength(20);
  const refused = await create(appId, key, MAIN);
  expect(refused.status).toBe(422);
  expect((await readJson(refused)).errors[0].message).toContain('at most 20');
  // Deleting one frees its place.
  const [oldest] = (await readJson(await list(appId, key))).data;
  expect((await remove(appId, key, oldest.id)).status).toBe(204);
  expect((await create(appId, key, MAIN)).status).toBe(201);
});

it("answers 404 for another app's rules and for unknown ids, 403 without the scope", async () => {
  const mine = await ownedApp();
  const theirs = await ownedApp();
  const theirRule = await readJson(await create(theirs.appId, theirs.key, MAIN));
  expect((await create(theirs.appId, mine.key, MAIN)).status).toBe(404);
  expect((await list(theirs.appId, mine.key)).status).toBe(404);
  expect((await remove(theirs.appId, mine.key, theirRule.id)).status).toBe(404);
  expect((await remove(mine.appId, mine.key, theirRule.id)).status).toBe(404); // their rule through my app
  expect((await remove(mine.appId, mine.key, 'rul_unknown123')).status).toBe(404);
  expect((await list(theirs.appId, theirs.key)).status).toBe(200);

  const readOnly = (await h.newKey(mine.appId, ['rules:read'])).key;
  expect((await create(mine.appId, readOnly, MAIN)).status).toBe(403);
  expect((await list(mine.appId, readOnly)).status).toBe(200);
  const builder = (await h.newKey(mine.appId, ['builds:write', 'builds:read'])).key;
  for (const res of [await list(mine.appId, builder), await create(mine.appId, builder, MAIN), await remove(mine.appId, builder, theirRule.id)]) {
    expect(res.status).toBe(403);
    expect((await readJson(res)).code).toBe('insufficient_scope');
  }
});

it('serves rules to staff over GraphQL: support reads, admin writes', async () => {
  const { appId } = await h.newApp();
  const support = await h.newStaff('support');
  const admin = await h.newStaff('admin');
  const createRule = 'mutation($a: ID!, $i: CreateOidcRuleInput!) { createOidcRule(appId: $a, input: $i) { id subjectPattern scopes } }';
  const refused = await readJson(await gql(support, createRule, { a: appId, i: MAIN }));
  expect(refused.errors[0].extensions.code).toBe('insufficient_scope');
  const created = await readJson(await gql(admin, createRule, { a: appId, i: MAIN }));
  expect(created.data.createOidcRule).toMatchObject(MAIN);
  const invalid = await readJson(await gql(admin, createRule, { a: appId, i: { ...MAIN, scopes: ['events:ingest'] } }));
  expect(invalid.errors[0].extensions).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '/scopes/0' }] });
  const unknownApp = await readJson(await gql(admin, createRule, { a: 'app_doesnotexist00', i: MAIN }));
  expect(unknownApp.errors[0].extensions.code).toBe('not_found');

  const read = await readJson(await gql(support, 'query($a: ID!) { app(id: $a) { trustRules { nodes { id } } } }', { a: appId }));
  expect(read.data.app.trustRules.nodes).toEqual([{ id: created.data.createOidcRule.id }]);
  const audit = await readJson(await gql(support, 'query($a: ID!) { app(id: $a) { auditEvents { nodes { action ruleId actor } } } }', { a: appId }));
  expect(audit.data.app.auditEvents.nodes.filter((e: { action: string }) => e.action.startsWith('oidc.'))).toEqual([{ action: 'oidc.rule_created', ruleId: created.data.createOidcRule.id, actor: expect.stringMatching(/^staff:/) }]);
  const deleted = await readJson(await gql(admin, 'mutation($a: ID!, $r: ID!) { deleteOidcRule(appId: $a, ruleId: $r) }', { a: appId, r: created.data.createOidcRule.id }));
  expect(deleted.data.deleteOidcRule).toBe(true);
});
