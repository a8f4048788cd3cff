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
import { CliError } from './errors';
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
    return { code: typeof parsed.code === 'string' ? parsed.code : undefined, detail: typeof parsed.detail === 'string' ? parsed.detail : undefined };
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

/** One PUT of the whole file; resolves with what to do next, never rejects. */
function putOnce(url: string, file: string, sizeBytes: number, progress: Progress): Promise<Outcome> {
  return new Promise((resolve) => {
    const target = new URL(url);
    const transport = target.protocol === 'https:' ? https : http;
    let settled = false;
    const settle = (outcome: Outcome) => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
    const source = fs.createReadStream(file, { highWaterMark: 1024 * 1024 });
    const req = transport.request(target, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(sizeBytes), 'user-agent': 'shieldgate-ci' },
    });
    const broken = (error: Error) => {
      source.destroy();
      req.destroy();
      settle({ kind: 'fresh_url', reason: `the connection broke (${(error as NodeJS.ErrnoException).code ?? error.message})` });
    };
    req.on('error', broken);
    source.on('error', (error) => {
      req.destroy();
      settle({ kind: 'fatal', message: `cannot read ${file}: ${error.message}` });
    });
    req.on('response', (res) => {
      source.unpipe(req);
      source.destroy();
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (body.length < MAX_BODY) body += chunk;
      });
      res.on('end', () => settle(classify(res.statusCode ?? 0, body, res.headers['retry-after'] as string | undefined)));
      res.on('error', broken);
    });
    progress.start();
    source.on('data', (chunk) => progress.advance(chunk.length));
    source.pipe(req);
  });
}

const MAX_ATTEMPTS = 8;
/** A URL this close to its expiry is renewed before the PUT starts rather than failing halfway. */
const EXPIRY_MARGIN_MS = 30_000;

export interface UploadArgs {
  api: ApiClient;
  credential: CredentialSource;
  build: Build;
  file: string;
  progress: Progress;
  log: (line: string) => void;
}

async function freshUrl(api: ApiClient, credential: CredentialSource, buildId: string): Promise<Build | 'already_uploaded'> {
  const { data, response } = await call('new upload URL', credential, (headers) => api.POST('/v1/builds/{id}/upload-url', { params: { path: { id: buildId } }, headers }), {
    okStatuses: [409],
  });
  return response.status === 409 ? 'already_uploaded' : data;
}

/** Uploads the build's pending artifact; returns when the service holds it. */
export async function uploadArtifact({ api, credential, build, file, progress, log }: UploadArgs): Promise<void> {
  let artifact = build.artifact;
  if (!artifact) throw new CliError('the build declared no artifact');
  if (artifact.status === 'uploaded') return;
  for (let attempt = 1; ; attempt++) {
    const expiresAt = artifact.uploadUrlExpiresAt ? Date.parse(artifact.uploadUrlExpiresAt) : 0;
    if (!artifact.uploadUrl || expiresAt - Date.now() < EXPIRY_MARGIN_MS) {
      const renewed = await freshUrl(api, credential, build.id);
      if (renewed === 'already_uploaded' || renewed.artifact?.status === 'uploaded') return;
      artifact = renewed.artifact!;
      continue;
    }
    const outcome = await putOnce(artifact.uploadUrl, file, artifact.sizeBytes, progress);
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
          if (renewed === 'already_uploaded' || renewed.artifact?.status === 'uploaded') return;
          artifact = renewed.artifact!;
        }
        break;
      }
    }
  }
}
