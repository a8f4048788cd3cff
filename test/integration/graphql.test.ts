// Protects: /graphql serves staff only (support reads, admin writes), refuses API keys, prevents CSRF, limits depth,
// cost (variables counted), aliases and batching, masks unexpected errors, and switches Apollo Sandbox on and off.
import { startHarness, bearer, type Harness, readJson } from '../support/harness';
import { createContext } from '../../src/services/context';
import { execute } from '../../rest/support/execute';
import { ThreatsDocument } from '../../src/generated/rest-operations';

let h: Harness;
let support: string;
let admin: string;
beforeAll(async () => {
  h = await startHarness();
  support = await h.newStaff('support');
  admin = await h.newStaff('admin');
});
afterAll(async () => h.close());

function gql(token: string | null, query: string, variables?: Record<string, unknown>) {
  return h.api('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? bearer(token) : {}) },
    body: JSON.stringify({ query, variables }),
  });
}

it('lets support staff read any app and its keys, never the secrets', async () => {
  const { appId } = await h.newApp('scale');
  const k = await h.newKey(appId, ['builds:read']);
  const res = await gql(support, 'query($id: ID!) { app(id: $id) { id plan apiKeys { id scopes mode revokedAt } } }', { id: appId });
  expect(res.status).toBe(200);
  const body = await readJson(res);
  expect(body.data.app).toEqual({ id: appId, plan: 'scale', apiKeys: [{ id: k.id, scopes: ['builds:read'], mode: 'live', revokedAt: null }] });
  expect(JSON.stringify(body)).not.toContain(k.key);
});

it('refuses mutations to support staff and runs them for admins', async () => {
  const mutation = 'mutation { createApp(input: { name: "from graphql", plan: indie }) { id plan } }';
  const refused = await gql(support, mutation);
  expect(refused.status).toBe(403);
  expect((await readJson(refused)).errors[0].extensions.code).toBe('insufficient_scope');
  const ok = await gql(admin, mutation);
  expect(ok.status).toBe(200);
  const created = (await readJson(ok)).data.createApp;
  expect(created.id).toMatch(/^app_/);
  expect(await h.deps.repos.apps.findById(created.id)).not.toBeNull();
});

it('shows a created key once and revokes it', async () => {
  const { appId } = await h.newApp();
  const res = await gql(admin, 'mutation($a: ID!) { createApiKey(input: { appId: $a, scopes: ["builds:read"] }) { key apiKey { id } } }', { a: appId });
  const { key, apiKey } = (await readJson(res)).data.createApiKey;
  expect((await h.api('/v1/whoami', { headers: bearer(key) })).status).toBe(200);
  await gql(admin, 'mutation($id: ID!) { revokeApiKey(id: $id) { revokedAt } }', { id: apiKey.id });
  expect((await h.api('/v1/whoami', { headers: bearer(key) })).status).toBe(401);
});

it('refuses API keys, missing tokens and forged staff tokens with 401', async () => {
  const { appId } = await h.newApp();
  const { key } = await h.newKey(appId, ['builds:read', 'builds:write', 'rules:write']);
  for (const token of [key, null, 'stf_AAAAAAAAAAAAAAAAAAAA_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB']) {
    const res = await gql(token, '{ ping }');
    expect(res.status).toBe(401);
    expect((await readJson(res)).errors[0].extensions.code).toBe('unauthorized');
  }
});

it('prevents CSRF: a simple GET without a preflight header is refused', async () => {
  const res = await h.api('/graphql?query=%7Bping%7D', { headers: bearer(support) });
  expect(res.status).toBe(400);
  const ok = await h.api('/graphql?query=%7Bping%7D', { headers: { ...bearer(support), 'apollo-require-preflight': 'true' } });
  expect(ok.status).toBe(200);
});

it('refuses queries that are too deep, too costly or too aliased before running them, each with its code', async () => {
  const deep = await gql(support, '{ apps { apiKeys { id } } __type(name: "App") { ofType { ofType { ofType { ofType { ofType { ofType { ofType { name } } } } } } } } }');
  expect(deep.status).toBe(400);
  expect((await readJson(deep)).errors).toEqual([expect.objectContaining({ message: 'Query depth limit of 8 exceeded, found 9.', extensions: { code: 'QUERY_TOO_DEEP' } })]);
  const costly = await gql(support, '{ apps(limit: 200) { apiKeys { id name scopes createdAt mode appId revokedAt expiresAt } } }');
  expect(costly.status).toBe(400);
  expect((await readJson(costly)).errors).toEqual([{ message: expect.stringMatching(/^Query cost \d+ exceeds the limit of 5000\.$/), extensions: { code: 'QUERY_TOO_COSTLY' } }]);
  const aliases = await gql(support, `{ ${Array.from({ length: 16 }, (_, i) => `a${i}: ping`).join(' ')} }`);
  expect(aliases.status).toBe(400);
  expect((await readJson(aliases)).errors).toEqual([expect.objectContaining({ message: 'Aliases limit of 15 exceeded, found 16.', extensions: { code: 'TOO_MANY_ALIASES' } })]);
  // A dashboard page of threats is an ordinary query: its `first` is counted once, not again for `nodes`.
  const { appId } = await h.newApp();
  const page = await gql(support, `query($a: ID!) { app(id: $a) { threats(first: 100) { nodes { id detection verdict confidence action signals platform appVersion buildId occurredAt count } pageInfo { hasNextPage endCursor } } } }`, { a: appId });
  const pageBody = await readJson(page);
  expect(pageBody.errors).toBeUndefined();
  expect(pageBody.data.app.threats).toEqual({ nodes: [], pageInfo: { hasNextPage: false, endCursor: null } });
});

it('counts a page size passed as a variable, as it counts one written in the query', async () => {
  const { appId } = await h.newApp();
  const builds = 'query($a: ID!, $n: Int) { builds(appId: $a, limit: $n) { id version scans { id engine grade score } } }';
  const small = await gql(support, builds, { a: appId, n: 10 });
  expect(await readJson(small)).toEqual({ data: { builds: [] } });
  const large = await gql(support, builds, { a: appId, n: 100 });
  expect(large.status).toBe(400);
  expect((await readJson(large)).errors[0]).toEqual({ message: 'Query cost 10301 exceeds the limit of 5000.', extensions: { code: 'QUERY_TOO_COSTLY' } });
});

it('refuses whole an operation whose cost cannot be measured: a null variable in a non-null argument runs nothing', async () => {
  // Execution would fail only `app` and run the costly rest unpriced.
  const query = 'query($x: ID = "a") { app(id: $x) { id } apps(limit: 200) { apiKeys { id name scopes createdAt mode appId revokedAt expiresAt } } }';
  const res = await gql(support, query, { x: null });
  expect(res.status).toBe(400);
  expect(await readJson(res)).toEqual({ errors: [{ message: 'Argument "id" of non-null type "ID!" must not be null.', extensions: { code: 'BAD_USER_INPUT' } }] });
  const measured = await gql(support, query, { x: 'app_x' });
  expect(measured.status).toBe(400);
  expect((await readJson(measured)).errors[0].extensions.code).toBe('QUERY_TOO_COSTLY');
});

it('prices each dashboard aggregate by the rows it may read, so one request runs only a few', async () => {
  const { appId } = await h.newApp();
  const range = { from: '2026-08-01T00:00:00.000Z', to: '2026-11-01T00:00:00.000Z' };
  const breakdowns = (n: number) =>
    `query($a: ID!, $r: DateRange!) { app(id: $a) { ${Array.from({ length: n }, (_, i) => `b${i}: threatBreakdown(range: $r, by: [], first: 1) { threats }`).join(' ')} } }`;
  const few = await gql(support, breakdowns(9), { a: appId, r: range });
  expect((await readJson(few)).errors).toBeUndefined();
  const many = await gql(support, breakdowns(10), { a: appId, r: range });
  expect(many.status).toBe(400);
  expect((await readJson(many)).errors[0]).toEqual({ message: 'Query cost 5011 exceeds the limit of 5000.', extensions: { code: 'QUERY_TOO_COSTLY' } });
  // The same aggregate through nodes(ids:) is priced once per id.
  const viaNodes = await gql(support, 'query($ids: [ID!]!, $r: DateRange!) { nodes(ids: $ids) { ... on App { threatBreakdown(range: $r, by: [], first: 1) { threats } } } }', {
    ids: Array.from({ length: 100 }, () => appId),
    r: range,
  });
  expect(viaNodes.status).toBe(400);
  expect((await readJson(viaNodes)).errors[0].extensions.code).toBe('QUERY_TOO_COSTLY');
});

it('refuses batched requests: one operation per request, each metered and limited', async () => {
  const res = await h.api('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...bearer(support) },
    body: JSON.stringify([{ query: '{ ping }' }, { query: '{ ping }' }]),
  });
  expect(res.status).toBe(400);
  expect(await res.text()).toContain('Operation batching disabled.');
});

it('refuses fragment cycles with graphql\'s own error, promptly', async () => {
  const res = await gql(support, 'query { app(id: "app_x") { ...A } } fragment A on App { id ...B } fragment B on App { name ...A }');
  expect(res.status).toBe(400);
  expect((await readJson(res)).errors.map((e: { message: string }) => e.message)).toContain('Cannot spread fragment "A" within itself via "B".');
});

it('bounds parsing: too many tokens, too large a body, and bytes that are not UTF-8 are refused', async () => {
  const tokens = await gql(support, `{ __typename ${'@include(if: true) '.repeat(3000)}}`);
  expect(tokens.status).toBe(400);
  expect((await readJson(tokens)).errors[0]).toMatchObject({
    message: expect.stringMatching(/^Syntax Error: Document contains more (than|that) 10000 tokens/),
    extensions: { code: 'GRAPHQL_PARSE_FAILED' },
  });

  const large = await gql(support, '{ __typename }', { pad: 'x'.repeat(120 * 1024) });
  expect(large.status).toBe(400);
  expect(await readJson(large)).toMatchObject({ code: 'malformed_request', detail: 'The body is larger than allowed (the limit is 100 KB).' });

  const bytes = Buffer.concat([Buffer.from('{"query":"{ __typename }","variables":{"x":"'), Buffer.from([0xc3]), Buffer.from('"}}')]);
  const latin = await h.api('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(support) }, body: bytes });
  expect(latin.status).toBe(400);
  expect(await readJson(latin)).toMatchObject({ code: 'malformed_request', detail: 'The body is not valid UTF-8.' });

  // An ordinary query still runs.
  expect(await readJson(await gql(support, '{ __typename }'))).toEqual({ data: { __typename: 'Query' } });
});

it('serves Apollo Sandbox when on, and not when off', async () => {
  const on = await h.api('/graphql', { headers: { accept: 'text/html' } });
  expect(on.status).toBe(200);
  expect(await on.text()).toContain('embeddable-sandbox');
  const off = await startHarness({ env: { GRAPHQL_SANDBOX: 'off' } });
  try {
    const res = await off.api('/graphql', { headers: { accept: 'text/html' } });
    expect(await res.text()).not.toContain('embeddable-sandbox');
  } finally {
    await off.close();
  }
});
