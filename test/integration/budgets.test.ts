// Protects: connection budgets (docs/contract.md, "Builds, artifacts, uploads", and issue "no client exhausts an instance"): slow headers
// on /v1 and /graphql are closed at HEADERS_TIMEOUT_MS; a trickled body at REQUEST_TIMEOUT_MS on every route but the
// upload, which outlives it; at most UPLOADS_PER_APP uploads in flight per app (409 too_many_uploads, Retry-After,
// even under 100 concurrent attempts) and UPLOADS_PER_INSTANCE per instance (503, Retry-After); /graphql counted per
// client address before authentication and per staff token after, with bodies parsed only after authentication.
import http from 'node:http';
import net from 'node:net';
import { createHash } from 'node:crypto';
import { startHarness, bearer, json, readJson, type Harness } from '../support/harness';

const HEADERS_TIMEOUT_MS = 500;
const REQUEST_TIMEOUT_MS = 800;
/** How long a hostile client keeps trickling before the test gives up on the server closing it. */
const PATIENCE_MS = 10_000;

let h: Harness;
let key: string;
beforeAll(async () => {
  h = await startHarness({
    env: {
      HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      GRAPHQL_ANONYMOUS_LIMIT: '10',
      GRAPHQL_STAFF_LIMIT: '5',
    },
  });
  const { appId } = await h.newApp('enterprise');
  key = (await h.newKey(appId, ['builds:write', 'builds:read'])).key;
});
afterAll(async () => h.close());

/**
 * Opens a raw connection, sends `head`, then one more byte of `trickle` every 100 ms. Resolves with how long the
 * server let it live, or -1 when it was still open after PATIENCE_MS.
 */
function trickle(head: string, more: string): Promise<number> {
  const { port } = new URL(h.baseUrl);
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(head));
    let i = 0;
    const timer = setInterval(() => {
      if (Date.now() - started > PATIENCE_MS) {
        clearInterval(timer);
        socket.destroy();
        resolve(-1);
        return;
      }
      if (!socket.destroyed) socket.write(more[i++ % more.length]);
    }, 100);
    socket.on('error', () => undefined);
    socket.on('data', () => undefined);
    socket.on('close', () => {
      clearInterval(timer);
      resolve(Date.now() - started);
    });
  });
}

describe('slow clients', () => {
  it.each(['GET /v1/whoami', 'POST /graphql'])('closes %s when its headers trickle past the headers timeout', async (line) => {
    const lived = await trickle(`${line} HTTP/1.1\r\nHost: 127.0.0.1\r\n`, 'X-Slow: aaaaaaaaaaaaaaaaaa\r\n');
    expect(lived).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 50);
    expect(lived).toBeLessThan(PATIENCE_MS);
  });

  it('closes a /v1 request whose body trickles past the request timeout', async () => {
    const head = `POST /v1/builds HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"platform":`;
    const lived = await trickle(head, ' ');
    expect(lived).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
    expect(lived).toBeLessThan(PATIENCE_MS);
  });

  it('closes a /graphql request whose body trickles past the request timeout', async () => {
    const staff = await h.newStaff('support');
    const head = `POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${staff}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"query":`;
    const lived = await trickle(head, ' ');
    expect(lived).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
    expect(lived).toBeLessThan(PATIENCE_MS);
  });
});

/** A two-byte artifact and a build declaring it, with its upload URL. */
async function newBuild(appKey: string, seed: number, on: Harness = h): Promise<{ url: string; bytes: Buffer }> {
  const bytes = Buffer.from([seed % 256, (seed >> 8) % 256]);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const res = await on.api('/v1/builds', { method: 'POST', headers: json(appKey), body: JSON.stringify({ platform: 'android', version: `1.${seed}`, artifact: { sizeBytes: 2, sha256 } }) });
  const build = await readJson(res);
  expect([res.status, build.detail]).toEqual([201, undefined]);
  return { url: build.artifact.uploadUrl, bytes };
}

interface HeldUpload {
  answer: Promise<{ status: number; headers: http.IncomingHttpHeaders; body: any }>;
  finish(): void;
}

/** An upload that sends its first byte and holds the rest until `finish`: an upload in flight. */
function holdUpload(url: string, bytes: Buffer): HeldUpload {
  const req = http.request(url, { method: 'PUT', headers: { 'content-type': 'application/octet-stream', 'content-length': String(bytes.length) } });
  const answer = new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: any }>((resolve, reject) => {
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null') }));
    });
    req.on('error', reject);
  });
  answer.catch(() => undefined);
  req.write(bytes.subarray(0, 1));
  return { answer, finish: () => req.end(bytes.subarray(1)) };
}

const settledWithin = <T>(p: Promise<T>, ms: number) => Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);

describe('upload budgets', () => {
  it('lets 4 of 100 concurrent uploads of one app run, refuses the rest with 409 and Retry-After, and outlives the request timeout', async () => {
    const builds: Array<{ url: string; bytes: Buffer }> = [await newBuild(key, 0)]; // one first: the signing key is made once
    for (let batch = 0; batch < 10; batch++) builds.push(...(await Promise.all(Array.from({ length: batch === 0 ? 9 : 10 }, (_, i) => newBuild(key, batch * 10 + i + 1)))));
    const uploads = builds.map((b) => holdUpload(b.url, b.bytes));
    // Wait until 96 are answered (the machine may be slow), then a little more: nothing else may be answered.
    const answered = uploads.map(() => false);
    uploads.forEach((u, i) => void u.answer.then(() => (answered[i] = true), () => undefined));
    for (let i = 0; i < 600 && answered.filter(Boolean).length < 96; i++) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 500));
    const held = uploads.filter((_, i) => !answered[i]);
    const firstRefused = answered.indexOf(true);
    expect(held).toHaveLength(4);
    const refused = await Promise.all(uploads.filter((_, i) => answered[i]).map((u) => u.answer));
    expect(refused).toHaveLength(96);
    for (const r of refused) {
      expect(r.status).toBe(409);
      expect(r.body.code).toBe('too_many_uploads');
      expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    // The uploads in flight are not cut by the request timeout: they have the stall watchdog instead.
    await new Promise((r) => setTimeout(r, REQUEST_TIMEOUT_MS + 400));
    for (const u of held) u.finish();
    for (const r of await Promise.all(held.map((u) => u.answer))) expect(r.status).toBe(200);
    // Their slots are free again.
    const next = builds[firstRefused];
    const again = holdUpload(next.url, next.bytes);
    again.finish();
    const after = await again.answer;
    expect([after.status, after.body?.code]).toEqual([200, undefined]);
  });

  it('refuses an upload beyond the instance budget with 503 and Retry-After', async () => {
    const small = await startHarness({ env: { UPLOADS_PER_INSTANCE: '2' } });
    try {
      const appKeys = await Promise.all([0, 1, 2].map(async () => (await small.newKey((await small.newApp('enterprise')).appId, ['builds:write'])).key));
      const builds = [];
      for (const [i, k] of appKeys.entries()) builds.push(await newBuild(k, 1000 + i, small));
      const first = holdUpload(builds[0].url, builds[0].bytes);
      const second = holdUpload(builds[1].url, builds[1].bytes);
      expect(await settledWithin(first.answer, 500)).toBe(false);
      expect(await settledWithin(second.answer, 500)).toBe(false);
      const third = holdUpload(builds[2].url, builds[2].bytes);
      const refused = await third.answer;
      expect(refused.status).toBe(503);
      expect(refused.body.code).toBe('unavailable');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      first.finish();
      second.finish();
      expect((await first.answer).status).toBe(200);
      expect((await second.answer).status).toBe(200);
    } finally {
      await small.close();
    }
  });
});

describe('/graphql budgets', () => {
  it('answers an unauthenticated flood 401 then 429 per client address, without parsing a body', async () => {
    const flood = await Promise.all(
      Array.from({ length: 40 }, () => h.api('/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{ this is not JSON' })),
    );
    const statuses = flood.map((r) => r.status).sort();
    // Not one 400: no body was parsed. The first 10 are refused as unauthenticated, the rest as over the limit.
    expect(statuses.filter((s) => s === 401)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(30);
    const limited = flood.find((r) => r.status === 429)!;
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await readJson(limited)).errors[0].extensions.code).toBe('rate_limited');
  });

  it('counts a staff token in its own bucket', async () => {
    const staff = await h.newStaff('support');
    const ping = () => h.api('/graphql', { method: 'POST', headers: { ...bearer(staff), 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ ping }' }) });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await ping()).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
  });
});
