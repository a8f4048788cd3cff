import { isIPv6 } from 'node:net';

/**
 * The key a client address counts under in per-address limits. An IPv6 host is usually given a whole /64 and can
 * take a new address in it for every request, so IPv6 addresses count per /64; an IPv4-mapped IPv6 address counts
 * as its IPv4 address; anything else (IPv4, or 'unknown' behind a misconfigured proxy) as it is.
 */
export function addressKey(address: string): string {
  if (!isIPv6(address)) return address;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  return `${expandIPv6(address).slice(0, 4).join(':')}::/64`;
}

/** The eight hextets of a valid IPv6 address, without leading zeros ('::' expanded, a dotted IPv4 tail converted). */
function expandIPv6(address: string): string[] {
  let text = address.toLowerCase().split('%')[0]; // a zone id names an interface, not a host
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, null];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const middle = tail === null ? [] : Array(8 - left.length - right.length).fill('0');
  return [...left, ...middle, ...right].map((hextet) => parseInt(hextet, 16).toString(16));
}
