import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';

/** Where and how long a webhook's host name is looked up (Config.webhookDns). */
export interface DnsSettings {
  readonly servers: readonly string[];
  /** The wait for one answer, per try. */
  readonly timeoutMs: number;
}

/** Tries per query: one lost UDP datagram is not a failed delivery; a server that never answers costs two waits. */
const DNS_TRIES = 2;

export class DnsTimeoutError extends Error {}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/**
 * The names RFC 6761 reserves for loopback: they never reach a name server, and the address policy refuses them
 * unless loopback is allowed (tests).
 */
function reservedLoopback(host: string): ResolvedAddress[] | null {
  const name = host.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost') ? [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }] : null;
}

/**
 * A webhook host's addresses (A, then AAAA), asked of the name servers through c-ares (dns.promises.Resolver), never
 * through dns.lookup: getaddrinfo runs on libuv's four thread-pool threads and cannot be cancelled, so a receiver's
 * zone that never answers would hold the threads file writes, zlib and the store's requests wait on, service-wide. A
 * resolver of its own per attempt: its timeout and tries bound each query, and `cancel()` ends whatever is still
 * asked once `budgetMs` is spent. The hosts file is not read (c-ares queries name servers only); `localhost` is.
 */
export async function resolveHost(host: string, dns: DnsSettings, budgetMs: number): Promise<ResolvedAddress[]> {
  const family = isIP(host);
  if (family) return [{ address: host, family: family as 4 | 6 }];
  const reserved = reservedLoopback(host);
  if (reserved) return reserved;
  const resolver = new Resolver({ timeout: dns.timeoutMs, tries: DNS_TRIES });
  if (dns.servers.length) resolver.setServers([...dns.servers]);
  let cancelled = false;
  const started = performance.now();
  const timer = setTimeout(() => {
    cancelled = true;
    resolver.cancel();
  }, budgetMs);
  try {
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
    const addresses: ResolvedAddress[] = [
      ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 as const })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 as const })) : []),
    ];
    if (addresses.length) return addresses;
    const codes = [v4, v6].map((r) => (r.status === 'rejected' ? (r.reason as NodeJS.ErrnoException).code : undefined));
    if (cancelled || codes.some((code) => code === 'ETIMEOUT' || code === 'ECANCELLED')) {
      const waited = performance.now() - started;
      throw new DnsTimeoutError(`DNS resolution of the host timed out after ${(waited / 1000).toFixed(1)} s`);
    }
    // No such name, or no address of either family: the caller's "no address". Anything else says what failed.
    const failure = codes.find((code) => code !== 'ENOTFOUND' && code !== 'ENODATA');
    if (failure) throw new Error(`DNS resolution of the host failed (${failure})`);
    return [];
  } finally {
    clearTimeout(timer);
  }
}
