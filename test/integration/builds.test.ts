// Protects: build registration and reads through the GraphQL core (REST facade and /graphql): createBuild with and
// without an artifact, the signed upload URL (15 minutes, at most 600 characters), Idempotency-Key (one build among
// 50 concurrent requests, replay header, 422 for another body), getBuild of another app 404, scopes 403,
// POST /v1/builds/{id}/upload-url, staff reads without any uploadUrl, and the scans field (the preview scan).
import { startHarness, bearer, json, type Harness } from '../support/harness';
import { artifactBytes, createBuildWithArtifact, tokenOf } from './uploads-support';
import { untyped } from './uploads-support';
import { verifyUploadToken } from '../../src/uploads/upload-token';

let h: Harness;
let appId: string;
let key: string;
beforeAll(async () => {
  h = await startHarness();
  appId = (await h.newApp('enterprise')).appId;
  key = (await h.newKey(appId, ['builds:write', 'builds:read'])).key;
});
afterAll(async () => h.close());

const SHA = 'a'.repeat(64);
const post = (body: unknown, headers: Record<string, string> = {}, k = key) =>
  h.api('/v1/builds', { method: 'POST', headers: { ...json(k), ...headers }, body: JSON.stringify(body) });

it('registers a build with a declared artifact: pending, with a signed upload URL valid 15 minutes', async () => {
  const res = await post({ platform: 'ios', version: '3.2.1', commit: 'deadbeef', artifact: { sizeBytes: 1234, sha256: SHA } });
  expect(res.status).toBe(201);
  expect(res.headers.get('ratelimit-limit')).toBeTruthy();
  const build = await res.json().then(untyped);
  expect(build).toMatchObject({ appId, platform: 'ios', version: '3.2.1', commit: 'deadbeef', status: 'succeeded', engine: 'preview' });
  // The scans domain makes a preview scan at registration (onBuildRegistered); the field lists it.
  expect(build.scans).toEqual([expect.objectContaining({ engine: 'preview', id: expect.stringMatching(/^scn_/) })]);
  expect(build.id).toMatch(/^bld_[A-Za-z0-9_-]{6,40}$/);
  expect(build.artifact).toMatchObject({ status: 'pending', sizeBytes: 1234, sha256: SHA });
  expect(build.artifact.uploadUrl.startsWith(`${h.baseUrl}/v1/uploads/`)).toBe(true);
  const token = tokenOf(build.artifact.uploadUrl);
  expect(token.length).toBeGreaterThanOrEqual(20);
  expect(token.length).toBeLessThanOrEqual(600);
  expect(new Date(build.artifact.uploadUrlExpiresAt).getTime()).toBe(h.clock.now().getTime() + 15 * 60 * 1000);
});

it('registers a build without an artifact: artifact null', async () => {
  const res = await post({ platform: 'android', version: '1.0' });
  expect(res.status).toBe(201);
  const build = await res.json().then(untyped);
  expect(build.artifact).toBeNull();
  expect(build.commit).toBeNull();
  const again = await h.api(`/v1/builds/${build.id}/upload-url`, { method: 'POST', headers: bearer(key) });
  expect(again.status).toBe(409);
  expect((await again.json().then(untyped)).code).toBe('artifact_not_pending');
});

it('refuses invalid bodies with field errors', async () => {
  for (const [body, pointer] of [
    [{ platform: 'android', version: '' }, '/version'],
    [{ platform: 'android', version: '1', artifact: { sizeBytes: 524288001, sha256: SHA } }, '/artifact/sizeBytes'],
    [{ platform: 'android', version: '1', artifact: { sizeBytes: 1, sha256: 'XYZ' } }, '/artifact/sha256'],
  ] as const) {
    const res = await post(body);
    expect(res.status).toBe(422);
    const problem = await res.json().then(untyped);
    expect(problem.code).toBe('validation_failed');
    expect(problem.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
  }
});

it('reads a build of its own app, and answers 404 for another app and for an unknown id', async () => {
  const build = await (await post({ platform: 'android', version: '2.0', artifact: { sizeBytes: 10, sha256: SHA } })).json().then(untyped);
  const own = await h.api(`/v1/builds/${build.id}`, { headers: bearer(key) });
  expect(own.status).toBe(200);
  const read = await own.json().then(untyped);
  expect(read.id).toBe(build.id);
  expect(read.artifact.uploadUrl.startsWith(`${h.baseUrl}/v1/uploads/`)).toBe(true);
  // A credential that only reads builds gets no URL: it could not ask for one, and an upload held open holds the lock.
  const reader = (await h.newKey(appId, ['builds:read'])).key;
  const readOnly = await (await h.api(`/v1/builds/${build.id}`, { headers: bearer(reader) })).json().then(untyped);
  expect(readOnly.artifact).toEqual({ status: 'pending', sizeBytes: 10, sha256: SHA });

  const other = await h.newApp('startup');
  const otherKey = (await h.newKey(other.appId, ['builds:read', 'builds:write'])).key;
  expect((await h.api(`/v1/builds/${build.id}`, { headers: bearer(otherKey) })).status).toBe(404);
  expect((await h.api(`/v1/builds/${build.id}/upload-url`, { method: 'POST', headers: bearer(otherKey) })).status).toBe(404);
  expect((await h.api('/v1/builds/bld_doesnotexist00', { headers: bearer(key) })).status).toBe(404);
});

it('answers 403 without the needed scope', async () => {
  const readOnly = (await h.newKey(appId, ['builds:read'])).key;
  const writeOnly = (await h.newKey(appId, ['builds:write'])).key;
  const created = await post({ platform: 'android', version: '1' }, {}, readOnly);
  expect(created.status).toBe(403);
  expect((await created.json().then(untyped)).code).toBe('insufficient_scope');
  const build = await (await post({ platform: 'android', version: '1' }, {}, writeOnly)).json().then(untyped);
  const read = await h.api(`/v1/builds/${build.id}`, { headers: bearer(writeOnly) });
  expect(read.status).toBe(403);
  const url = await h.api(`/v1/builds/${build.id}/upload-url`, { method: 'POST', headers: bearer(readOnly) });
  expect(url.status).toBe(403);
});

it('replays an idempotent createBuild, and refuses the key with another body', async () => {
  const body = { platform: 'android', version: '5.0', artifact: { sizeBytes: 99, sha256: SHA } };
  const first = await post(body, { 'idempotency-key': 'build-replay-1' });
  expect(first.status).toBe(201);
  expect(first.headers.get('idempotent-replayed')).toBeNull();
  const original = await first.json().then(untyped);
  const second = await post(body, { 'idempotency-key': 'build-replay-1' });
  expect(second.status).toBe(201);
  expect(second.headers.get('idempotent-replayed')).toBe('true');
  const replayed = await second.json().then(untyped);
  expect(replayed.id).toBe(original.id);
  // The stored answer holds no upload URL (a bearer credential); the replay signs one for the same build and window.
  const stored = await h.deps.db.collection('idempotency_keys').find({ appId: original.appId }).toArray();
  expect(JSON.stringify(stored)).not.toContain('/v1/uploads/');
  expect(replayed.artifact.uploadUrlExpiresAt).toBe(original.artifact.uploadUrlExpiresAt);
  const grant = await verifyUploadToken(h.deps.signingKeys, replayed.artifact.uploadUrl.split('/v1/uploads/')[1]);
  expect(grant).toEqual({ buildId: original.id, appId: original.appId, sizeBytes: 99, sha256: SHA });
  const other = await post({ ...body, version: '5.1' }, { 'idempotency-key': 'build-replay-1' });
  expect(other.status).toBe(422);
  expect((await other.json().then(untyped)).code).toBe('idempotency_key_reused');
});

it('makes one build of 50 concurrent createBuild requests with one Idempotency-Key', async () => {
  const app = await h.newApp('enterprise');
  const k = (await h.newKey(app.appId, ['builds:write', 'builds:read'])).key;
  const body = { platform: 'android', version: '9.9.9' };
  const responses = await Promise.all(Array.from({ length: 50 }, () => post(body, { 'idempotency-key': 'concurrent-create-1' }, k)));
  const statuses = responses.map((r) => r.status);
  expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
  const ids = new Set((await Promise.all(responses.filter((r) => r.status === 201).map((r) => r.json().then(untyped)))).map((b) => b.id));
  expect(ids.size).toBe(1);
  expect(await h.deps.repos.builds.listForApp(app.appId, 100)).toHaveLength(1);
});

it('issues a fresh upload URL after the first one expired', async () => {
  const { bytes, sha256 } = artifactBytes(10);
  const build = await createBuildWithArtifact(h, key, bytes, sha256);
  h.clock.advance(16 * 60 * 1000);
  const stale = await (await h.api(`/v1/builds/${build.id}`, { headers: bearer(key) })).json().then(untyped);
  expect(stale.artifact.status).toBe('pending');
  expect(stale.artifact.uploadUrl).toBeUndefined();
  const res = await h.api(`/v1/builds/${build.id}/upload-url`, { method: 'POST', headers: bearer(key) });
  expect(res.status).toBe(200);
  const fresh = await res.json().then(untyped);
  expect(fresh.artifact.uploadUrl).toBeTruthy();
  expect(new Date(fresh.artifact.uploadUrlExpiresAt).getTime()).toBe(h.clock.now().getTime() + 15 * 60 * 1000);
});

describe('/graphql for staff', () => {
  const gql = (token: string, query: string, variables: Record<string, unknown> = {}) =>
    h.api('/graphql', { method: 'POST', headers: json(token), body: JSON.stringify({ query, variables }) }).then((r) => r.json().then(untyped));

  it('reads builds of any app but never sees an upload URL, and cannot register builds', async () => {
    const build = await (await post({ platform: 'android', version: '7.0', artifact: { sizeBytes: 5, sha256: SHA } })).json().then(untyped);
    const support = await h.newStaff('support');
    const one = await gql(support, 'query($id: ID!) { build(id: $id) { id appId artifact { status uploadUrl uploadUrlExpiresAt } scans { id } } }', { id: build.id });
    expect(one.errors).toBeUndefined();
    expect(one.data.build).toMatchObject({ id: build.id, appId, artifact: { status: 'pending', uploadUrl: null }, scans: build.scans.map((x: { id: string }) => ({ id: x.id })) });
    const list = await gql(support, 'query($appId: ID!) { builds(appId: $appId) { id artifact { uploadUrl } } }', { appId });
    expect(list.data.builds.map((b: { id: string }) => b.id)).toContain(build.id);
    expect(list.data.builds.every((b: { artifact: { uploadUrl: string | null } | null }) => !b.artifact?.uploadUrl)).toBe(true);

    const admin = await h.newStaff('admin');
    const created = await gql(admin, 'mutation { createBuild(input: { platform: android, version: "1" }) { id } }');
    expect(created.errors[0].extensions.code).toBe('forbidden');
    const url = await gql(admin, 'mutation($id: ID!) { createUploadUrl(buildId: $id) { id } }', { id: build.id });
    expect(url.errors[0].extensions.code).toBe('forbidden');
  });
});
