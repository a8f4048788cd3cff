// Protects: an upload while the S3 store is down answers 503 `unavailable` with Retry-After and leaves the artifact
// pending and unlocked; once the server is back, a retry of the same URL succeeds. The service also starts while
// the store is down (the bucket is created on first use).
import { startHarness, type Harness } from '../support/harness';
import { startS3, type S3Server } from '../bed/servers';
import { artifactBytes, createBuildWithArtifact, put } from './uploads-support';

let s3: S3Server;
let h: Harness;
let key: string;
beforeAll(async () => {
  s3 = await startS3(); // our own server: stopping it must not disturb the other test files
  h = await startHarness({
    env: {
      ARTIFACT_STORE: 's3',
      S3_BUCKET: 'faults',
      S3_ENDPOINT: s3.endpoint,
      S3_REGION: s3.region,
      S3_ACCESS_KEY_ID: s3.accessKeyId,
      S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    },
  });
  const { appId } = await h.newApp('scale');
  key = (await h.newKey(appId, ['builds:write', 'builds:read'])).key;
});
afterAll(async () => {
  await h.close();
  await s3.stop();
});

it('answers 503 with Retry-After while S3 is down, and the same URL succeeds once it is back', async () => {
  for (const size of [200 * 1024, 12 * 1024 * 1024]) {
    // Small bodies take the single-PUT path, large ones the multipart path of the store.
    const { bytes, sha256 } = artifactBytes(size);
    const build = await createBuildWithArtifact(h, key, bytes, sha256);
    await s3.stop();
    try {
      const down = await put(build.artifact.uploadUrl, bytes);
      expect(down.status).toBe(503);
      expect(down.body.code).toBe('unavailable');
      expect(Number(down.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      const doc = await h.deps.repos.builds.findById(build.appId, build.id);
      expect(doc!.artifact!.status).toBe('pending');
    } finally {
      await s3.restart();
    }
    const retry = await put(build.artifact.uploadUrl, bytes);
    expect(retry.status).toBe(200);
    expect(retry.body.artifact.status).toBe('uploaded');
    const doc = await h.deps.repos.builds.findById(build.appId, build.id);
    expect(await h.deps.artifacts.exists(doc!.artifact!.storageKey)).toBe(true);
  }
});
