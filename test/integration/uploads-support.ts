/** Helpers of the build and upload tests: a raw HTTP PUT that reads an early answer, and artifact fixtures. */
import http from 'node:http';
import { createHash, randomBytes } from 'node:crypto';
import type { Harness } from '../support/harness';
import { json } from '../support/harness';

export interface PutResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any;
}

export interface PutOptions {
  contentType?: string;
  /** Send only the first `n` bytes, then cut the connection (a client that disconnects halfway). */
  disconnectAfter?: number;
  /** Send only the first `n` bytes, then keep the connection open and silent (a stalled or half-open client). */
  stallAfter?: number;
  /** Called once the bytes before the stall are written. */
  onStalled?: () => void;
  /** More request headers (e.g. X-Forwarded-For, which the test server trusts from loopback). */
  headers?: Record<string, string>;
}

/**
 * PUT through node:http, chunk by chunk. The server may answer before the body is sent (413, 409) and close the
 * connection: the answer is what counts, so a write error after it is ignored.
 */
export function put(url: string, body: Buffer, opts: PutOptions = {}): Promise<PutResult> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'PUT',
      headers: { 'content-type': opts.contentType ?? 'application/octet-stream', 'content-length': String(body.length), ...opts.headers },
    });
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        if (opts.stallAfter !== undefined) req.destroy(); // the stalled body will never be finished
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          /* not JSON */
        }
        resolve({ status: res.statusCode!, headers: res.headers, body: parsed });
      });
      res.on('error', reject);
    });
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    const limit = opts.disconnectAfter ?? opts.stallAfter ?? body.length;
    const chunk = 64 * 1024;
    let offset = 0;
    const pump = () => {
      while (offset < limit) {
        const end = Math.min(offset + chunk, limit);
        const ok = req.write(body.subarray(offset, end));
        offset = end;
        if (!ok) return void req.once('drain', pump);
      }
      if (opts.stallAfter !== undefined) {
        opts.onStalled?.();
      } else if (opts.disconnectAfter !== undefined) {
        // Let the bytes reach the server, then vanish mid-body.
        setTimeout(() => {
          req.destroy();
          resolve({ status: 0, headers: {}, body: null });
        }, 200);
      } else {
        req.end();
      }
    };
    pump();
  });
}

export function artifactBytes(size: number): { bytes: Buffer; sha256: string } {
  const bytes = randomBytes(size);
  return { bytes, sha256: createHash('sha256').update(bytes).digest('hex') };
}

export async function createBuildWithArtifact(h: Harness, key: string, bytes: Buffer, sha256: string): Promise<any> {
  const res = await h.api('/v1/builds', {
    method: 'POST',
    headers: json(key),
    body: JSON.stringify({ platform: 'android', version: '1.0.0', commit: 'abc123', artifact: { sizeBytes: bytes.length, sha256 } }),
  });
  if (res.status !== 201) throw new Error(`createBuild answered ${res.status}: ${await res.text()}`);
  return res.json().then(untyped);
}

/** A JSON body whose shape the test asserts (the contract is checked by response validation). */
export const untyped = (value: unknown): any => value;

/** The token part of an upload URL. */
export const tokenOf = (uploadUrl: string) => uploadUrl.slice(uploadUrl.lastIndexOf('/') + 1);
