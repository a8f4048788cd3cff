/**
 * The soak's clients reach the instances as they would through a load balancer: round robin over the instances, the
 * next one when a connection is refused or reset (a killed instance), and again after `Retry-After` when the service
 * answers 503. Every attempt is written to the ledger. Calls that change something carry what makes a retry safe (an
 * Idempotency-Key, event ids, the same upload URL), so a retry after an answer lost to a fault counts nothing twice.
 */
import http from 'node:http';
import type { Ledger } from './ledger';

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json(): any;
}

/** One attempt's budget: the service's own request timeout is 30 s. */
const ATTEMPT_TIMEOUT_MS = 35_000;
/** A retry waits what Retry-After says, at most this, so the soak keeps pressing on a recovering service. */
const MAX_RETRY_WAIT_MS = 2_000;

export class Balancer {
  private next = 0;
  stopping = false;

  constructor(
    /** The instances' base URLs, e.g. http://127.0.0.1:8081 */
    readonly origins: string[],
    private readonly ledger: Ledger,
  ) {}

  /** The next origin in turn. */
  pick(): string {
    const origin = this.origins[this.next % this.origins.length];
    this.next += 1;
    return origin;
  }

  /**
   * One logical call: retried on another instance after a network error and after 503, until an answer other than
   * 503 or `deadlineMs`. Answers the last attempt's answer, or null when every attempt failed below HTTP.
   */
  async call(op: string, path: string, init: RequestInit = {}, deadlineMs = 180_000): Promise<Answer | null> {
    const until = Date.now() + deadlineMs;
    let last: Answer | null = null;
    for (let attempt = 0; Date.now() < until; attempt++) {
      const origin = this.pick();
      const started = performance.now();
      try {
        const res = await fetch(origin + path, { ...init, signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS) });
        const text = await res.text();
        const ms = performance.now() - started;
        const retryAfter = res.headers.get('retry-after');
        this.ledger.answered(op, res.status, ms, retryAfter, res.status >= 500 ? `${init.method ?? 'GET'} ${path.replace(/\/v1\/uploads\/[^/?]+/, '/v1/uploads/…')}: ${text}` : '');
        last = { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) };
        if (res.status !== 503) return last;
        await sleep(Math.min(Number(retryAfter ?? 1) * 1000, MAX_RETRY_WAIT_MS));
      } catch {
        this.ledger.failed();
        await sleep(Math.min(100 * 2 ** attempt, 1_000));
      }
    }
    return last;
  }

  /**
   * PUT of an artifact's bytes to one instance. With `cutAfter`, the body stops after that many bytes and the
   * connection is destroyed, as a CI runner that lost its network would; the answer is then null.
   */
  put(origin: string, path: string, body: Buffer, cutAfter?: number): Promise<Answer | null> {
    const url = new URL(origin + path);
    const started = performance.now();
    return new Promise((resolve) => {
      let settled = false;
      const done = (answer: Answer | null) => {
        if (settled) return;
        settled = true;
        if (!answer) this.ledger.failed();
        resolve(answer);
      };
      const req = http.request(url, { method: 'PUT', headers: { 'content-type': 'application/octet-stream', 'content-length': String(body.length) }, timeout: ATTEMPT_TIMEOUT_MS }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', () => done(null));
        res.on('end', () => {
          if (settled) return;
          const text = Buffer.concat(chunks).toString('utf8');
          const status = res.statusCode ?? 0;
          const retryAfter = typeof res.headers['retry-after'] === 'string' ? res.headers['retry-after'] : null;
          this.ledger.answered('upload', status, performance.now() - started, retryAfter, status >= 500 ? `PUT /v1/uploads/…: ${text}` : '');
          const headers = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') headers.set(k, v);
          done({ status, headers, text, json: () => JSON.parse(text) });
        });
      });
      req.on('timeout', () => req.destroy(new Error('timeout')));
      // An answer that came before the error (an early 503 whose connection then closed) stands.
      req.on('error', () => setTimeout(() => done(null), 100));
      if (cutAfter === undefined) {
        req.end(body);
        return;
      }
      req.write(body.subarray(0, cutAfter), () => setTimeout(() => req.destroy(new Error('cut')), 50));
    });
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
