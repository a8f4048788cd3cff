// Protects: no cache keeps a secret (issue: secrets never leak sideways): every answer that carries an upload URL, an
// access token, a key secret or a staff-visible document says `Cache-Control: no-store`, replays included.
import { createHash } from 'node:crypto';
import { startHarness, bearer, json, readJson, type Harness } from '../support/harness';

let h: Harness;
let key: string;
beforeAll(async () => {
  h = await startHarness();
  const { appId } = await h.newApp('enterprise');
  key = (await h.newKey(appId, ['builds:write', 'builds:read'])).key;
});
afterAll(async () => h.close());

it('says no-store on every answer carrying an upload URL, first and replayed', async () => {
  const sha256 = createHash('sha256').update('ab').digest('hex');
  const body = JSON.stringify({ platform: 'ios', version: '2.0', artifact: { sizeBytes: 2, sha256 } });
  const created = await h.api('/v1/builds', { method: 'POST', headers: { ...json(key), 'idempotency-key': 'cache-control-1' }, body });
  const build = await readJson(created);
  expect(build.artifact.uploadUrl).toContain('/v1/uploads/');
  expect(created.headers.get('cache-control')).toBe('no-store');
  const replayed = await h.api('/v1/builds', { method: 'POST', headers: { ...json(key), 'idempotency-key': 'cache-control-1' }, body });
  expect(replayed.headers.get('idempotent-replayed')).toBe('true');
  expect(replayed.headers.get('cache-control')).toBe('no-store');
  const read = await h.api(`/v1/builds/${build.id}`, { headers: bearer(key) });
  expect((await readJson(read)).artifact.uploadUrl).toBeDefined();
  expect(read.headers.get('cache-control')).toBe('no-store');
  const fresh = await h.api(`/v1/builds/${build.id}/upload-url`, { method: 'POST', headers: bearer(key) });
  expect(fresh.status).toBe(200);
  expect(fresh.headers.get('cache-control')).toBe('no-store');
});

it('says no-store on the GraphQL answer that carries a new key secret', async () => {
  const admin = await h.newStaff('admin');
  const { appId } = await h.newApp();
  const res = await h.api('/graphql', {
    method: 'POST',
    headers: { ...bearer(admin), 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'mutation($a: ID!) { createApiKey(input: { appId: $a, scopes: ["builds:read"] }) { key } }', variables: { a: appId } }),
  });
  expect((await readJson(res)).data.createApiKey.key).toMatch(/^svc_live_/);
  expect(res.headers.get('cache-control')).toBe('no-store');
});
