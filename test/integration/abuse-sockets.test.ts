// Protects: an answer sent before the request's body arrived (401, 404, 405, 413, 429...) ends the connection
// (src/http/early-answer.ts): `Connection: close`, then the socket closed once the answer is written. Without it,
// Node keeps reading the body after the answer, the request timeout no longer applies, and unauthenticated clients
// dripping a byte a second hold their connections as long as they like.
import net from 'node:net';
import { createHash } from 'node:crypto';
import { startHarness, json, readJson, type Harness } from '../support/harness';
import { createBuildWithArtifact } from './uploads-support';

const REQUEST_TIMEOUT_MS = 3_000;
const CONNECTIONS = 200;

let h: Harness;
let key: string;
beforeAll(async () => {
  h = await startHarness({ jobs: false, env: { REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS) } });
  const { appId } = await h.newApp('enterprise');
  key = (await h.newKey(appId, ['builds:write', 'builds:read'])).key;
});
afterAll(async () => h.close());

interface Dripped {
  /** How long the server let the connection live, or -1 when it was still open after `patienceMs`. */
  lived: number;
  /** The status line and headers the server sent, if any. */
  head: string;
}

/**
 * Opens a raw connection, sends `head` (headers announcing a body), then one byte of body a second until the server
 * closes the connection or `patienceMs` pass.
 */
function drip(head: string, patienceMs: number): Promise<Dripped> {
  const { port } = new URL(h.baseUrl);
  return new Promise((resolve) => {
    const started = Date.now();
    let received = '';
    let done = false;
    const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(head));
    const finish = (lived: number) => {
      if (done) return;
      done = true;
      clearInterval(timer);
      clearTimeout(patience);
      socket.destroy();
      resolve({ lived, head: received.split('\r\n\r\n')[0] });
    };
    const timer = setInterval(() => {
      if (!socket.destroyed && socket.writable) socket.write(' ');
    }, 1_000);
    const patience = setTimeout(() => finish(-1), patienceMs);
    socket.on('error', () => undefined);
    socket.on('data', (chunk) => (received += chunk.toString('latin1')));
    // The server's FIN ends the connection for the client (the test's socket does not half-stay open).
    socket.on('end', () => finish(Date.now() - started));
    socket.on('close', () => finish(Date.now() - started));
  });
}

const statusOf = (head: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
const headers = (head: string) => head.toLowerCase();

it(`closes ${CONNECTIONS} unauthenticated POST /v1/builds connections dripping a byte a second within REQUEST_TIMEOUT_MS`, async () => {
  const head = `POST /v1/builds HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`;
  const results = await Promise.all(Array.from({ length: CONNECTIONS }, () => drip(head, REQUEST_TIMEOUT_MS * 3)));
  const open = results.filter((r) => r.lived < 0 || r.lived >= REQUEST_TIMEOUT_MS);
  expect(open).toHaveLength(0);
  // Every one was answered (401, or 429 once the address's anonymous budget ran out) and told the connection ends.
  for (const r of results) {
    expect([401, 429]).toContain(statusOf(r.head));
    expect(headers(r.head)).toContain('connection: close');
  }
});

it.each([
  ['404, an unknown path', 'POST /v1/nothing-here', 404],
  ['405, a method the path does not have', 'PATCH /v1/builds', 405],
])('closes a connection answered %s before its body', async (_what, line, status) => {
  const r = await drip(`${line} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{`, REQUEST_TIMEOUT_MS * 3);
  expect(statusOf(r.head)).toBe(status);
  expect(headers(r.head)).toContain('connection: close');
  expect(r.lived).toBeGreaterThanOrEqual(0);
  expect(r.lived).toBeLessThan(REQUEST_TIMEOUT_MS);
});

it('closes a connection answered 400 for a declared JSON body over the limit, with a credential', async () => {
  const r = await drip(
    `POST /v1/builds HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${8 * 1024 * 1024}\r\n\r\n{`,
    REQUEST_TIMEOUT_MS * 3,
  );
  // The JSON operations list 400 for a body they cannot take (docs/contract.md); the upload lists 413.
  expect(statusOf(r.head)).toBe(400);
  expect(headers(r.head)).toContain('connection: close');
  expect(r.lived).toBeGreaterThanOrEqual(0);
  expect(r.lived).toBeLessThan(REQUEST_TIMEOUT_MS);
});

it('closes an upload answered 413 for a declared length over the artifact, outside the request timeout', async () => {
  const bytes = Buffer.from([1, 2]);
  const build = await createBuildWithArtifact(h, key, bytes, createHash('sha256').update(bytes).digest('hex'));
  const path = new URL(build.artifact.uploadUrl).pathname;
  const r = await drip(`PUT ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\nContent-Length: 5000\r\n\r\n`, REQUEST_TIMEOUT_MS * 3);
  expect(statusOf(r.head)).toBe(413);
  expect(headers(r.head)).toContain('connection: close');
  expect(r.lived).toBeGreaterThanOrEqual(0);
  expect(r.lived).toBeLessThan(REQUEST_TIMEOUT_MS);
});

it('keeps the connection of a request answered after its whole body arrived', async () => {
  const res = await h.api('/v1/builds', {
    method: 'POST',
    headers: json(key),
    body: JSON.stringify({ platform: 'android', version: '1.0.0', artifact: { sizeBytes: 2, sha256: 'a'.repeat(64) } }),
  });
  const body = await readJson(res);
  expect([res.status, body.detail]).toEqual([201, undefined]);
  expect(res.headers.get('connection')).not.toBe('close');
});
