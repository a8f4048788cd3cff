import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isLoopbackAddress, isPublicAddress } from './address-policy';
import { resolveHost, type DnsSettings } from './resolve-host';

/** Per-attempt budget: connect, send and the receiver's answer. */
export const ATTEMPT_TIMEOUT_MS = 10_000;
/** The receiver's answer body is read and dropped, at most this much of it. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/** The system's name servers, two tries of 2 s: what Config.webhookDns holds when nothing is set. */
const DEFAULT_DNS: DnsSettings = { servers: [], timeoutMs: 2_000 };

export type SendOutcome = { ok: boolean; status: number | null; error: string | null };

export class RefusedAddressError extends Error {}

/**
 * Resolves the host once (resolveHost: c-ares, off the thread pool, within `budgetMs`) and checks every address; the
 * connection then goes to the checked address (the socket's lookup answers with it), so a DNS answer that changes
 * between check and connect (rebinding) reaches nothing else. TLS still verifies the certificate against the host name.
 */
export async function resolveAllowed(
  hostname: string,
  allowLoopback: boolean,
  dns: DnsSettings = DEFAULT_DNS,
  budgetMs: number = ATTEMPT_TIMEOUT_MS,
): Promise<{ address: string; family: number }> {
  const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  const addresses = await resolveHost(host, dns, budgetMs);
  if (!addresses.length) throw new RefusedAddressError('the host has no address');
  for (const a of addresses) {
    const allowed = isPublicAddress(a.address) || (allowLoopback && isLoopbackAddress(a.address));
    if (!allowed) throw new RefusedAddressError(`the host resolves to a non-public address (${a.address})`);
  }
  return addresses[0];
}

/** Resolves within `ms` or fails: a name server that never answers must not hold a sender past its attempt's budget. */
export function withinMs<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => (timer = setTimeout(() => reject(new Error('timed out after 10 s')), ms)));
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

export async function sendSigned(
  rawUrl: string,
  headers: Record<string, string>,
  body: string,
  allowLoopback: boolean,
  dns: DnsSettings = DEFAULT_DNS,
): Promise<SendOutcome> {
  const url = new URL(rawUrl);
  const startedAt = performance.now();
  let target: { address: string; family: number };
  try {
    // The attempt's budget starts here: the name's resolution spends it too (cancelled at its end).
    target = await withinMs(resolveAllowed(url.hostname, allowLoopback, dns, ATTEMPT_TIMEOUT_MS), ATTEMPT_TIMEOUT_MS);
  } catch (error) {
    return { ok: false, status: null, error: error instanceof Error ? error.message : String(error) };
  }
  const remainingMs = Math.max(1, ATTEMPT_TIMEOUT_MS - (performance.now() - startedAt));
  const pinned: LookupFunction = (_host, options, callback) => {
    if (options?.all) (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [target]);
    else callback(null, target.address, target.family);
  };
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<SendOutcome>((resolve) => {
    const req = client.request(
      url,
      {
        method: 'POST',
        lookup: pinned,
        headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'shieldgate-webhooks', ...headers },
        timeout: ATTEMPT_TIMEOUT_MS,
        agent: false, // a fresh connection per attempt: nothing pooled was checked against another address
      },
      (res) => {
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) res.destroy();
        });
        const status = res.statusCode ?? null;
        const done = () => resolve({ ok: status !== null && status >= 200 && status < 300, status, error: null });
        res.on('end', done);
        res.on('close', done);
        res.on('error', done);
      },
    );
    // The whole attempt, not just socket idleness: a receiver trickling bytes still ends at 10 s.
    const deadline = setTimeout(() => req.destroy(new Error('timed out after 10 s')), remainingMs);
    req.on('timeout', () => req.destroy(new Error('timed out after 10 s')));
    req.on('error', (error) => resolve({ ok: false, status: null, error: error.message.slice(0, 200) }));
    req.on('close', () => clearTimeout(deadline));
    req.end(body);
  });
}
