/**
 * PUT of the package to its signed upload URL, streamed from disk with progress. Survives the network: 5xx, 429 and
 * a busy artifact are retried with back-off; an expired URL or a broken connection gets a fresh URL from
 * POST /v1/builds/{id}/upload-url and starts again; a 409 saying the artifact is already uploaded is success (an
 * earlier attempt, or a retried step, finished it).
 */
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { call, type ApiClient, type Build, type CredentialSource } from './api';
import { CliError, detailLine } from './errors';
import type { Progress } from './progress';
import { backoffMs, retryAfterMs, sleep } from './retry';

type Outcome =
  | { kind: 'uploaded' }
  | { kind: 'already_uploaded' }
  | { kind: 'fresh_url'; reason: string }
  | { kind: 'retry'; reason: string; afterMs: number | null }
  | { kind: 'fatal'; message: string };

const MAX_BODY = 64 * 1024;

function readCode(body: string): { code?: string; detail?: string } {
  try {
    const parsed = JSON.parse(body) as { code?: unknown; detail?: unknown };
    const detail = typeof parsed.detail === 'string' ? detailLine(parsed.detail) : undefined;
    return { code: typeof parsed.code === 'string' ? parsed.code : undefined, detail };
  } catch {
    return {};
  }
}

function classify(status: number, body: string, retryAfter: string | undefined): Outcome {
  const { code, detail } = readCode(body);
  const after = retryAfterMs(retryAfter);
  if (status === 200) return { kind: 'uploaded' };
  if (status === 409 && code === 'artifact_already_uploaded') return { kind: 'already_uploaded' };
  if (status === 403) return { kind: 'fresh_url', reason: 'the upload URL expired' };
  // The lock of a connection that just broke is released when the service notices; wait for it.
  if (status === 409 || status === 429 || status >= 500) return { kind: 'retry', reason: `HTTP ${status}${code ? ` ${code}` : ''}`, afterMs: after };
  if (status === 400) return { kind: 'retry', reason: detail ?? 'HTTP 400', afterMs: null }; // a stalled body
  if (status === 413 || status === 422) {
    return { kind: 'fatal', message: `the service refused the package: ${detail ?? `HTTP ${status}`} (did the file change while it was uploaded?)` };
  }
  return { kind: 'fatal', message: `upload failed: ${detail ?? `HTTP ${status}`}` };
}

/**
 * Bytes per read and per socket write, and buffers in flight (one being read from disk while the others are with the
 * socket). Every byte is copied twice by the kernel, from the page cache into a buffer and from the buffer into the
 * socket; when all buffers together fit in a core's L2 cache, the second copy reads from the cache instead of memory,
 * and the larger the chunks within that, the less JavaScript runs per byte. Measured (bench:client, 500 MB, against
 * curl): with 512 KiB of L2 (common CI runners), 96 KiB x 4 was best, 0.92 of curl on Node 24 and 0.83 on Node 20
 * (64, 128 and 192 KiB fell between; 1 MiB x 3: 0.74 and 0.77, with 50 % more CPU); with 1 MiB of L2, 256 KiB x 4
 * cut the client's CPU from 0.14 to 0.10 s against 96 KiB x 4 (curl: 0.08 s), 0.90 to 0.98 of curl on Node 20. So:
 * 96 KiB where the L2 cache, read from Linux's sysfs, is 512 KiB or less or unknown; above, a quarter of it, at
 * most 256 KiB.
 */
const BUFFERS = 4;
const SMALL_L2_CHUNK = 96 * 1024;
let chunkBytesOnce: number | undefined;

/** The size of one core's L2 cache as Linux reports it ("1024K"), or undefined elsewhere. */
function l2CacheBytes(): number | undefined {
  const dir = '/sys/devices/system/cpu/cpu0/cache';
  try {
    for (const index of fs.readdirSync(dir).filter((name) => name.startsWith('index'))) {
      const read = (file: string) => fs.readFileSync(`${dir}/${index}/${file}`, 'utf8').trim();
      if (read('level') !== '2' || read('type') === 'Instruction') continue;
      const match = /^(\d+)([KM]?)$/.exec(read('size'));
      if (match) return Number(match[1]) * (match[2] === 'M' ? 1024 * 1024 : match[2] === 'K' ? 1024 : 1);
    }
  } catch {
    // No sysfs (macOS, Windows, a sandbox): the default.
  }
  return undefined;
}

function chunkBytes(): number {
  if (chunkBytesOnce === undefined) {
    const l2 = l2CacheBytes() ?? 0;
    chunkBytesOnce = l2 <= 512 * 1024 ? SMALL_L2_CHUNK : Math.min(256 * 1024, Math.floor(l2 / BUFFERS / 16384) * 16384);
  }
  return chunkBytesOnce;
}

/** Why the body stopped before its end: the request settled (an answer, a broken connection) while it was sent. */
class Stopped extends Error {}

/**
 * Writes bytes [0, sizeBytes) of the file to `req` through a few buffers reused for the whole upload (no new buffer
 * per chunk, so nothing for the garbage collector and a flat RSS; a fresh buffer per chunk grew the RSS by 130-200 MB
 * on Node 24, the Action's runtime: docs/benchmarks.md, bench:client). A buffer is read into again only once the socket has taken
 * it (its write callback), which is also the back-pressure; the other buffers keep the socket busy meanwhile. Reads
 * are synchronous: a read of a package just built (in the page cache) takes microseconds, while a read on libuv's
 * thread pool costs two thread hand-offs per chunk, each a wait for a core on a busy CI runner (measured:
 * bench:client).
 */
async function sendBody(file: string, sizeBytes: number, req: http.ClientRequest, stopped: Promise<never>, progress: Progress): Promise<void> {
  const fd = fs.openSync(file, 'r');
  try {
    const chunk = chunkBytes();
    const buffers = Array.from({ length: Math.min(BUFFERS, Math.max(1, Math.ceil(sizeBytes / chunk))) }, () => Buffer.allocUnsafeSlow(chunk));
    const taken: Promise<void>[] = buffers.map(() => Promise.resolve());
    // A failed write breaks the request, whose error or close settles the upload: then only `stopped` is awaited.
    let writeFailed = false;
    for (let offset = 0, i = 0; offset < sizeBytes; i = (i + 1) % buffers.length) {
      await Promise.race([taken[i], stopped]);
      if (writeFailed) await stopped;
      const bytesRead = fs.readSync(fd, buffers[i], 0, Math.min(chunk, sizeBytes - offset), offset);
      if (bytesRead === 0) throw new Error(`it is shorter than the ${sizeBytes} bytes it had when it was hashed`);
      taken[i] = new Promise((resolve) =>
        req.write(buffers[i].subarray(0, bytesRead), (error) => {
          if (error) writeFailed = true;
          resolve();
        }),
      );
      offset += bytesRead;
      progress.advance(bytesRead);
    }
    await Promise.race([Promise.all(taken), stopped]);
    if (writeFailed) await stopped;
    req.end();
  } finally {
    fs.closeSync(fd);
  }
}

/** One PUT of the whole file; resolves with what to do next, never rejects. */
function putOnce(url: string, file: string, sizeBytes: number, progress: Progress): Promise<Outcome> {
  return new Promise((resolve) => {
    const target = new URL(url);
    const transport = target.protocol === 'https:' ? https : http;
    let settled = false;
    let stop: (reason: Stopped) => void = () => undefined;
    const stopped = new Promise<never>((_resolve, reject) => (stop = reject));
    stopped.catch(() => undefined);
    const settle = (outcome: Outcome) => {
      if (settled) return;
      settled = true;
      stop(new Stopped());
      resolve(outcome);
    };
    const req = transport.request(target, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(sizeBytes), 'user-agent': 'shieldgate-ci' },
    });
    const broken = (error: Error) => {
      req.destroy();
      settle({ kind: 'fresh_url', reason: `the connection broke (${(error as NodeJS.ErrnoException).code ?? error.message})` });
    };
    req.on('error', broken);
    let answered = false;
    req.on('close', () => {
      if (!answered) broken(new Error('closed before an answer'));
    });
    // The service may answer before the body ends (an expired URL): the answer decides, the rest is not sent.
    req.on('response', (res) => {
      answered = true;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (body.length < MAX_BODY) body += chunk;
      });
      res.on('end', () => settle(classify(res.statusCode ?? 0, body, res.headers['retry-after'] as string | undefined)));
      res.on('error', broken);
    });
    progress.start();
    sendBody(file, sizeBytes, req, stopped, progress).catch((error: Error) => {
      // Settled before the body ended (an early answer, a broken connection): the rest of the body is not sent.
      if (!(error instanceof Stopped)) settle({ kind: 'fatal', message: `cannot read ${file}: ${error.message}` });
      req.destroy();
    });
  });
}

const MAX_ATTEMPTS = 8;
/** A URL this close to its expiry is renewed before the PUT starts. */
const EXPIRY_MARGIN_MS = 30_000;

export interface UploadArgs {
  api: ApiClient;
  credential: CredentialSource;
  build: Build;
  file: string;
  progress: Progress;
  log: (line: string) => void;
}

/** A new upload URL for the build's artifact; 'already_uploaded' when the service holds it already. */
async function freshUrl(api: ApiClient, credential: CredentialSource, buildId: string): Promise<NonNullable<Build['artifact']> | 'already_uploaded'> {
  const { data, response } = await call('new upload URL', credential, (headers) => api.POST('/v1/builds/{id}/upload-url', { params: { path: { id: buildId } }, headers }), {
    okStatuses: [409],
  });
  if (response.status === 409 || data.artifact?.status === 'uploaded') return 'already_uploaded';
  if (!data.artifact?.uploadUrl) throw new CliError('the service gave no upload URL for the build');
  return data.artifact;
}

/** Uploads the build's pending artifact; returns when the service holds it. */
export async function uploadArtifact({ api, credential, build, file, progress, log }: UploadArgs): Promise<void> {
  let artifact = build.artifact;
  if (!artifact) throw new CliError('the build declared no artifact');
  if (artifact.status === 'uploaded') return;
  // A URL about to expire is renewed before the PUT starts rather than failing halfway. A URL just issued is used as
  // it is: if it looks expired, this machine's clock is ahead of the service's, which decides.
  let issuedNow = false;
  for (let attempt = 1; ; attempt++) {
    const expiresAt = artifact.uploadUrlExpiresAt ? Date.parse(artifact.uploadUrlExpiresAt) : 0;
    if (!artifact.uploadUrl || (!issuedNow && expiresAt - Date.now() < EXPIRY_MARGIN_MS)) {
      const renewed = await freshUrl(api, credential, build.id);
      if (renewed === 'already_uploaded') return;
      artifact = renewed;
      issuedNow = true;
    }
    const outcome = await putOnce(artifact.uploadUrl!, file, artifact.sizeBytes, progress);
    issuedNow = false;
    progress.done();
    switch (outcome.kind) {
      case 'uploaded':
      case 'already_uploaded':
        return;
      case 'fatal':
        throw new CliError(outcome.message);
      case 'fresh_url':
      case 'retry': {
        if (attempt >= MAX_ATTEMPTS) throw new CliError(`upload failed after ${attempt} attempts: ${outcome.reason}`);
        const waitMs = outcome.kind === 'retry' ? (outcome.afterMs ?? backoffMs(attempt, 1000)) : backoffMs(attempt, 250);
        log(`upload: ${outcome.reason}; ${outcome.kind === 'fresh_url' ? 'starting again with a fresh URL' : 'retrying'} in ${(waitMs / 1000).toFixed(1)} s`);
        await sleep(waitMs);
        if (outcome.kind === 'fresh_url') {
          const renewed = await freshUrl(api, credential, build.id);
          if (renewed === 'already_uploaded') return;
          artifact = renewed;
          issuedNow = true;
        }
        break;
      }
    }
  }
}
