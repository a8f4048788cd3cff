import { BlockList, isIP } from 'node:net';
import { embeddedIpv4 } from '../core/ip-address';

/**
 * Addresses a webhook may never reach: a receiver URL is chosen by the app owner, so without this anyone with
 * rules:write could make the service call its own network (metadata endpoints, databases, admin ports).
 */
const refused = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) refused.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 96], // unspecified, loopback and IPv4-compatible (::a.b.c.d, deprecated: no receiver uses it)
  ['::ffff:0:0:0', 96], // IPv4-translated (SIIT): embeds an IPv4 address
  ['64:ff9b:1::', 48], // local-use NAT64: likewise
  ['fec0::', 10], // site-local (deprecated, still routed inside some networks)
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
  ['64:ff9b::', 96], // NAT64: embeds an IPv4 address this list cannot see through
  ['2002::', 16], // 6to4: likewise
] as const) refused.addSubnet(network, prefix, 'ipv6');

/** True when the address is loopback (127/8, ::1, or v4-mapped loopback). */
export function isLoopbackAddress(address: string): boolean {
  const v4 = isIP(address) === 6 ? embeddedIpv4(address) : address;
  if (v4 && isIP(v4) === 4) return v4.startsWith('127.');
  return address === '::1';
}

/** True when a webhook may connect to this literal address (public unicast only). Anything unparsable is refused. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !refused.check(address, 'ipv4');
  if (family !== 6) return false;
  if (refused.check(address, 'ipv6')) return false;
  const v4 = embeddedIpv4(address);
  return v4 ? isIP(v4) === 4 && !refused.check(v4, 'ipv4') : true;
}
