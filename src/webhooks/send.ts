import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isLoopbackAddress, isPublicAddress } from './address-policy';
import { resolveHost, type DnsSettings } from './resolve-host';

/** The receiver's answer body is read and dropped, at most this much of it. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/** The system's name servers, two tries of 2 s: what Config.webhookDns holds when nothing is set. */
const DEFAULT_DNS: DnsSettings = { servers: [], timeoutMs: 2_000 };
/** Two tries of 2 s and a little: a resolution asked outside an attempt (whose deadline bounds it otherwise). */
const DEFAULT_DNS_BUDGET_MS = 5_000;

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
  budgetMs: number = DEFAULT_DNS_BUDGET_MS,
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

/** Fails with `message` unless `work` settles within `ms`: a name server that never answers must not hold a sender past its deadline. */
export function withinMs<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)));
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

export interface SendOptions {
  /**
   * The attempt's one deadline, from the name's resolution to the answer body's last byte (resolution, connection,
   * TLS, request, status line, body). An answer not complete by then is a failure, whatever its status line said.
   */
  readonly deadlineMs: number;
  readonly allowLoopback: boolean;
  readonly dns?: DnsSettings;
}

export async function sendSigned(rawUrl: string, headers: Record<string, string>, body: string, options: SendOptions): Promise<SendOutcome> {
  const { deadlineMs, allowLoopback, dns = DEFAULT_DNS } = options;
  const late = `no complete answer within the attempt's ${deadlineMs} ms`;
  const url = new URL(rawUrl);
  const startedAt = performance.now();
  let target: { address: string; family: number };
  try {
    // The deadline starts here: the name's resolution spends it too (cancelled at its end).
    target = await withinMs(resolveAllowed(url.hostname, allowLoopback, dns, deadlineMs), deadlineMs, late);
  } catch (error) {
    return { ok: false, status: null, error: error instanceof Error ? error.message : String(error) };
  }
  const remainingMs = deadlineMs - (performance.now() - startedAt);
  if (remainingMs <= 0) return { ok: false, status: null, error: late };
  const pinned: LookupFunction = (_host, lookupOptions, callback) => {
    if (lookupOptions?.all) (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [target]);
    else callback(null, target.address, target.family);
  };
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<SendOutcome>((resolve) => {
    // The first outcome stands: the deadline's, the answer's end, or the connection's failure, whichever comes first.
    // Every path settles (the deadline at the latest), and settling clears the deadline.
    let settled = false;
    let status: number | null = null;
    const settle = (outcome: SendOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve(outcome);
    };
    const req = client.request(
      url,
      {
        method: 'POST',
        lookup: pinned,
        headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'shieldgate-webhooks', ...headers },
        agent: false, // a fresh connection per attempt: nothing pooled was checked against another address
      },
      (res) => {
        status = res.statusCode ?? null;
        const answered = () => ({ ok: status !== null && status >= 200 && status < 300, status, error: null });
        let read = 0;
        let enough = false;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read <= MAX_RESPONSE_BYTES) return;
          // Read enough of it: the status line is the answer; the rest is not waited for.
          enough = true;
          settle(answered());
          res.destroy();
        });
        // A timer that has not run yet does not make a late end timely: the deadline is the clock's, not the loop's.
        res.on('end', () => settle(performance.now() - startedAt <= deadlineMs ? answered() : { ok: false, status, error: late }));
        // Closed or failed before its end (the receiver hung up mid-body): no complete answer, not a delivery.
        const cut = () => settle(enough ? answered() : { ok: false, status, error: 'the answer ended before its body did' });
        res.on('error', cut);
        res.on('close', cut);
      },
    );
    // The whole exchange, not socket idleness: a receiver trickling bytes, before or after its status line, ends here.
    const deadline = setTimeout(() => {
      settle({ ok: false, status, error: late });
      req.destroy();
    }, remainingMs);
    req.on('error', (error) => settle({ ok: false, status, error: error.message.slice(0, 200) }));
    req.end(body);
  });
}
