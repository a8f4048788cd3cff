// Protects: an upload through which no byte moves for UPLOAD_IDLE_TIMEOUT_S (a stalled or half-open connection,
// which the operating system may keep for hours) is stopped with 400, leaves nothing visible and releases its lock,
// so the client's retry of the same URL succeeds instead of meeting 409 upload_in_progress. Idleness is measured on
// the service clock: the test advances it instead of waiting. A body that trickles (a few bytes now and then, never
// idle) is stopped the same way once a window of the idle limit carried less than UPLOAD_MIN_RATE_KBPS, and one that
// keeps a steady pace is stopped after UPLOAD_MAX_MINUTES. An address whose upload URLs keep failing their check has
// its next ones checked without a database read for the rest of the minute, a valid one still honoured.
import http from 'node:http';
import { startHarness, type Harness } from '../support/harness';
import { UploadLocksRepo } from '../../src/data/upload-locks-repo';
import { artifactBytes, createBuildWithArtifact, put } from './uploads-support';
import { FAILED_UPLOAD_TOKENS_PER_MINUTE } from '../../src/uploads/failed-upload-tokens';

let h: Harness;
let key: string;
beforeAll(async () => {
  h = await startHarness({ env: { UPLOAD_IDLE_TIMEOUT_S: '1' } });
  const { appId } = await h.newApp('scale');
  key = (await h.newKey(appId, ['builds:write', 'builds:read'])).key;
});
afterAll(async () => h.close());

async function untilLocked(buildId: string): Promise<void> {
  const locks = h.deps.db.collection(UploadLocksRepo.collectionName);
  for (let i = 0; i < 200 && !(await locks.findOne({ _id: buildId as never })); i++) await new Promise((r) => setTimeout(r, 25));
}

/** Advances the service clock by `stepMs`, again and again, until `pending` settles (at most 40 times). */
async function advanceUntil<T>(pending: Promise<T>, stepMs: number): Promise<T> {
  let settled = false;
  void pending.finally(() => (settled = true));
  for (let i = 0; i < 40 && !settled; i++) {
    h.clock.advance(stepMs);
    await Promise.race([pending, new Promise((resolve) => setTimeout(resolve, 300))]);
  }
  return pending;
}

/**
 * A PUT whose body goes out 256 bytes every `everyMs` of real time. `answer` settles with the service's answer; `sent()`
 * is how many bytes went out; `stop()` ends the drip and the connection.
 */
function drippingPut(url: string, bytes: Buffer, everyMs: number) {
  const req = http.request(url, { method: 'PUT', headers: { 'content-type': 'application/octet-stream', 'content-length': String(bytes.length) } });
  req.on('error', () => undefined); // the server answers and closes while bytes are still going out
  let offset = 0;
  const drip = setInterval(() => {
    if (offset < bytes.length) req.write(bytes.subarray(offset, (offset += 256)));
  }, everyMs);
  const answer = new Promise<{ status: number; body: any }>((resolve) =>
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    }),
  );
  return {
    answer,
    sent: () => offset,
    stop: () => {
      clearInterval(drip);
      req.destroy();
    },
  };
}

it('stops an upload whose client went silent, and the same URL works again at once', async () => {
  const { bytes, sha256 } = artifactBytes(2 * 1024 * 1024);
  const build = await createBuildWithArtifact(h, key, bytes, sha256);
  const url: string = build.artifact.uploadUrl;

  let signal!: () => void;
  const halfSent = new Promise<void>((resolve) => (signal = resolve));
  const stalled = put(url, bytes, { stallAfter: 1024 * 1024, onStalled: () => signal() });
  await halfSent;
  await untilLocked(build.id);

  // Before the limit, the silent upload still holds the artifact.
  const during = await put(url, bytes);
  expect(during.status).toBe(409);
  expect(during.body.code).toBe('upload_in_progress');

  // Service time passes with no byte arriving. The server may still be taking in the bytes sent before the stall
  // (each resets the count), so time is advanced until the watchdog, ticking every 250 ms, stops the upload.
  const stopped = await advanceUntil(stalled, 1_500);
  expect(stopped.status).toBe(400);
  expect(stopped.body).toMatchObject({
    code: 'malformed_request',
    detail: 'No byte of the body arrived for 1 s; the upload was stopped. The artifact stays pending; the same URL may be used again.',
  });
  const doc = await h.deps.repos.builds.findById(build.appId, build.id);
  expect(doc!.artifact!.status).toBe('pending');
  expect(await h.deps.artifacts.exists(doc!.artifact!.storageKey)).toBe(false);

  const retry = await put(url, bytes);
  expect(retry.status).toBe(200);
  expect(retry.body.artifact.status).toBe('uploaded');
});

it('stops an upload that trickles under the minimum rate, and the same URL works again at once', async () => {
  const { bytes, sha256 } = artifactBytes(256 * 1024);
  const build = await createBuildWithArtifact(h, key, bytes, sha256);
  const url: string = build.artifact.uploadUrl;

  // 256 bytes every 100 ms of real time: never idle for the 1 s limit, far under 4 KB per window of it.
  const upload = drippingPut(url, bytes, 100);
  const answer = upload.answer;
  try {
    await untilLocked(build.id);
    // Half a window of service time per 150 ms of real time: a chunk always arrives between two steps.
    const stopped = await advanceUntilSlow(answer, 500);
    expect(stopped.status).toBe(400);
    expect(stopped.body).toMatchObject({
      code: 'malformed_request',
      detail: 'The body arrived at less than 4 KB/s for 1 s; the upload was stopped. The artifact stays pending; the same URL may be used again.',
    });
  } finally {
    upload.stop();
  }
  const doc = await h.deps.repos.builds.findById(build.appId, build.id);
  expect(doc!.artifact!.status).toBe('pending');
  const retry = await put(url, bytes);
  expect(retry.status).toBe(200);
});

/** Like advanceUntil, in smaller steps with shorter pauses, so the trickling client keeps pace with the clock. */
async function advanceUntilSlow<T>(pending: Promise<T>, stepMs: number): Promise<T> {
  let settled = false;
  void pending.finally(() => (settled = true));
  for (let i = 0; i < 60 && !settled; i++) {
    h.clock.advance(stepMs);
    await Promise.race([pending, new Promise((resolve) => setTimeout(resolve, 150))]);
  }
  return pending;
}

it('stops an upload that keeps a steady pace for longer than UPLOAD_MAX_MINUTES', async () => {
  // An instance of its own: one minute at most, no minimum rate, an idle limit of 4 s (its watchdog ticks each second).
  const own = await startHarness({ env: { UPLOAD_MAX_MINUTES: '1', UPLOAD_MIN_RATE_KBPS: '0', UPLOAD_IDLE_TIMEOUT_S: '4' }, jobs: false });
  const { appId } = await own.newApp('scale');
  const ownKey = (await own.newKey(appId, ['builds:write', 'builds:read'])).key;
  const { bytes, sha256 } = artifactBytes(256 * 1024);
  const build = await createBuildWithArtifact(own, ownKey, bytes, sha256);
  const upload = drippingPut(build.artifact.uploadUrl, bytes, 50);
  const answer = upload.answer;
  try {
    // 2 s of service time per 100 ms of real time: bytes arrive between every two steps, so it is never idle.
    let settled = false;
    void answer.finally(() => (settled = true));
    for (let i = 0; i < 60 && !settled; i++) {
      own.clock.advance(2_000);
      await Promise.race([answer, new Promise((resolve) => setTimeout(resolve, 100))]);
    }
    const stopped = await answer;
    expect(stopped.status).toBe(400);
    expect(stopped.body.detail).toBe('The upload took longer than 1 minute; it was stopped. The artifact stays pending; the same URL may be used again.');
    expect(upload.sent()).toBeLessThan(bytes.length); // it was still sending
  } finally {
    upload.stop();
    await own.close();
  }
});

it('checks the tokens of an address whose upload URLs keep failing without a database read, and still honours a valid one', async () => {
  const { bytes, sha256 } = artifactBytes(1024);
  const build = await createBuildWithArtifact(h, key, bytes, sha256);
  const url: string = build.artifact.uploadUrl;
  const forged = url.replace(/\/v1\/uploads\/.*$/, '/v1/uploads/eyJhbGciOiJFUzI1NiIsImtpZCI6Im5vbmUiLCJ0eXAiOiJ1cGxvYWQifQ.e30.c2ln');
  const flooder = { 'x-forwarded-for': '203.0.113.77' };
  for (let i = 0; i < FAILED_UPLOAD_TOKENS_PER_MINUTE; i++) expect((await put(forged, bytes, { headers: flooder })).status).toBe(403);
  // Past the count, a forged URL gets the same 403 without a database read; a valid one is still honoured
  // (test/integration/abuse-upload-tokens.test.ts counts the reads).
  const refused = await put(forged, bytes, { headers: flooder });
  expect(refused.status).toBe(403);
  expect(refused.body.code).toBe('upload_url_invalid');
  expect((await put(url, bytes, { headers: flooder })).status).toBe(200);
});
