// Protects: PUT /v1/uploads/{token} on both artifact stores (filesystem and the test bed's S3 server): the body is
// verified (size and SHA-256) before anything becomes visible; 413 past the declared size, 422 for a short or other
// body with the artifact still pending and the same URL retryable; exactly one winner among 20 concurrent PUTs
// (others 409) and 409 after success; 403 for expired, tampered and revoked-key tokens; 404 when the build is gone;
// a client that disconnects halfway leaves nothing and does not block a retry; no rate-limit headers.
import { randomBytes } from 'node:crypto';
import { startHarness, bearer, json, type Harness, s3StoreEnv } from '../support/harness';
import { artifactBytes, createBuildWithArtifact, put, tokenOf } from './uploads-support';
import { untyped } from './uploads-support';

function storeEnv(kind: 'fs' | 's3'): Record<string, string> {
  return kind === 'fs' ? { ARTIFACT_STORE: 'fs' } : s3StoreEnv('uploads');
}

describe.each(['fs', 's3'] as const)('uploads to the %s store', (kind) => {
  let h: Harness;
  let key: string;
  beforeAll(async () => {
    h = await startHarness({ env: storeEnv(kind) });
    const { appId } = await h.newApp('scale');
    key = (await h.newKey(appId, ['builds:write', 'builds:read'])).key;
  });
  afterAll(async () => h.close());

  const stored = async (build: any) => {
    const doc = await h.deps.repos.builds.findById(build.appId, build.id);
    return h.deps.artifacts.exists(doc!.artifact!.storageKey);
  };
  const readBack = async (build: any): Promise<Buffer> => {
    const doc = await h.deps.repos.builds.findById(build.appId, build.id);
    const stream = await h.deps.artifacts.get(doc!.artifact!.storageKey);
    const chunks: Buffer[] = [];
    for await (const c of stream!) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  };

  it('stores a verified body, answers the uploaded Build, and refuses a second upload', async () => {
    const { bytes, sha256 } = artifactBytes(3 * 1024 * 1024 + 17);
    const build = await createBuildWithArtifact(h, key, bytes, sha256);
    const res = await put(build.artifact.uploadUrl, bytes);
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(build.id);
    expect(res.body.artifact).toEqual({ status: 'uploaded', sizeBytes: bytes.length, sha256 });
    expect(res.headers['ratelimit-limit']).toBeUndefined();
    expect(res.headers['service-api-version']).toBeDefined();
    expect((await readBack(build)).equals(bytes)).toBe(true);

    const read = await (await h.api(`/v1/builds/${build.id}`, { headers: bearer(key) })).json().then(untyped);
    expect(read.artifact.status).toBe('uploaded');
    expect(read.artifact.uploadUrl).toBeUndefined();

    const again = await put(build.artifact.uploadUrl, bytes);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('artifact_already_uploaded');
  });

  it('answers 413 past the declared size and keeps the artifact pending for a retry', async () => {
    const { bytes, sha256 } = artifactBytes(256 * 1024);
    const build = await createBuildWithArtifact(h, key, bytes, sha256);
    const tooLong = Buffer.concat([bytes, randomBytes(4 * 1024 * 1024)]);
    const res = await put(build.artifact.uploadUrl, tooLong);
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('payload_too_large');
    expect(res.headers.connection).toBe('close');
    expect(await stored(build)).toBe(false);
    expect((await put(build.artifact.uploadUrl, bytes)).status).toBe(200);
  });

  it('answers 422 for a shorter body or another hash, shows nothing, and lets the same URL retry', async () => {
    const { bytes, sha256 } = artifactBytes(512 * 1024);
    const build = await createBuildWithArtifact(h, key, bytes, sha256);
    const short = await put(build.artifact.uploadUrl, bytes.subarray(0, bytes.length - 1));
    expect(short.status).toBe(422);
    expect(short.body.code).toBe('artifact_mismatch');
    const other = await put(build.artifact.uploadUrl, randomBytes(bytes.length));
    expect(other.status).toBe(422);
    expect(other.body.code).toBe('artifact_mismatch');
    expect(await stored(build)).toBe(false);
    const read = await (await h.api(`/v1/builds/${build.id}`, { headers: bearer(key) })).json().then(untyped);
    expect(read.artifact.status).toBe('pending');
    expect((await put(build.artifact.uploadUrl, bytes)).status).toBe(200);
    expect((await readBack(build)).equals(bytes)).toBe(true);
  });

  it('lets exactly one of 20 concurrent uploads of one URL win; the others get 409', async () => {
    const { bytes, sha256 } = artifactBytes(1024 * 1024);
    const build = await createBuildWithArtifact(h, key, bytes, sha256);
    const results = await Promise.all(Array.from({ length: 20 }, () => put(build.artifact.uploadUrl, bytes)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    // Beyond the app's 4 upload slots, a concurrent attempt is refused before it reaches the artifact's lock.
    for (const r of results.filter((r) => r.status === 409)) expect(['upload_in_progress', 'artifact_already_uploaded', 'too_many_uploads']).toContain(r.body.code);
  });

  it('leaves nothing visible when the client disconnects halfway, and a retry then succeeds', async () => {
    const { bytes, sha256 } = artifactBytes(2 * 1024 * 1024);
    const build = await createBuildWithArtifact(h, key, bytes, sha256);
    await put(build.artifact.uploadUrl, bytes, { disconnectAfter: 1024 * 1024 });
    expect(await stored(build)).toBe(false);
    // The server notices the disconnect and releases the lock; the retry may meet it a moment before that.
    let retry = await put(build.artifact.uploadUrl, bytes);
    for (let i = 0; i < 20 && retry.status === 409 && retry.body.code === 'upload_in_progress'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      retry = await put(build.artifact.uploadUrl, bytes);
    }
    expect(retry.status).toBe(200);
    expect((await readBack(build)).equals(bytes)).toBe(true);
  });

  it('refuses an expired, a tampered and a malformed token with 403, and a token of a deleted build with 404', async () => {
    const { bytes, sha256 } = artifactBytes(1024);
    const build = await createBuildWithArtifact(h, key, bytes, sha256);
    const url: string = build.artifact.uploadUrl;
    const token = tokenOf(url);
    const [header, payload, signature] = token.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...claims, size: claims.size + 1 })).toString('base64url')}.${signature}`;
    const flipped = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
    // Too short and too long for the token's pattern are invalid tokens too, not validation errors.
    for (const bad of [forged, flipped, 'x'.repeat(40), 'abc', 'x'.repeat(700)]) {
      const res = await put(`${h.baseUrl}/v1/uploads/${bad}`, bytes);
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('upload_url_invalid');
    }

    const other = await createBuildWithArtifact(h, key, bytes, sha256);
    await h.deps.db.collection('builds').deleteOne({ _id: other.id });
    const gone = await put(other.artifact.uploadUrl, bytes);
    expect(gone.status).toBe(404);

    h.clock.advance(15 * 60 * 1000 + 1000);
    try {
      const expired = await put(url, bytes);
      expect(expired.status).toBe(403);
      expect(expired.body.code).toBe('upload_url_invalid');
      expect(await stored(build)).toBe(false);
      // A CI job whose URL expired asks for a fresh one and resumes.
      const fresh = await h.api(`/v1/builds/${build.id}/upload-url`, { method: 'POST', headers: bearer(key) });
      expect(fresh.status).toBe(200);
      const body = await fresh.json().then(untyped);
      expect((await put(body.artifact.uploadUrl, bytes)).status).toBe(200);
    } finally {
      h.clock.advance(-(15 * 60 * 1000 + 1000));
    }
  });

  it('invalidates upload URLs when the signing key is revoked', async () => {
    const { bytes, sha256 } = artifactBytes(2048);
    const build = await createBuildWithArtifact(h, key, bytes, sha256);
    await h.deps.signingKeys.rotate({ revokePrevious: true });
    const res = await put(build.artifact.uploadUrl, bytes);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('upload_url_invalid');
    // Reading the build gives a URL signed by the new key.
    const read = await (await h.api(`/v1/builds/${build.id}`, { headers: bearer(key) })).json().then(untyped);
    expect(read.artifact.uploadUrl).not.toBe(build.artifact.uploadUrl);
    expect((await put(read.artifact.uploadUrl, bytes)).status).toBe(200);
  });

  it('refuses a body that is not application/octet-stream with 400 unsupported_media_type (the contract lists no 415)', async () => {
    const { bytes, sha256 } = artifactBytes(100);
    const build = await createBuildWithArtifact(h, key, bytes, sha256);
    const res = await put(build.artifact.uploadUrl, bytes, { contentType: 'text/plain' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('unsupported_media_type');
    expect(await stored(build)).toBe(false);
  });

  it('needs no Authorization header, and ignores one', async () => {
    const { bytes, sha256 } = artifactBytes(100);
    const build = await createBuildWithArtifact(h, key, bytes, sha256);
    const res = await h.api(new URL(build.artifact.uploadUrl).pathname, {
      method: 'PUT',
      headers: { ...json('svc_live_bogus_bogus'), 'content-type': 'application/octet-stream' },
      body: bytes,
    });
    expect(res.status).toBe(200);
  });
});
