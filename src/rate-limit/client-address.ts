import { isIPv6 } from 'node:net';
import { embeddedIpv4, ipv6Prefix64 } from '../core/ip-address';

/**
 * The key a client address counts under in per-address limits. An IPv6 host is usually given a whole /64 and can
 * take a new address in it for every request, so IPv6 addresses count per /64; an IPv4-mapped IPv6 address counts
 * as its IPv4 address; anything else (IPv4, or 'unknown' behind a misconfigured proxy) as it is.
 */
export function addressKey(address: string): string {
  if (!isIPv6(address)) return address;
  return embeddedIpv4(address) ?? ipv6Prefix64(address);
}
