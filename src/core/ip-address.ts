/** What Node does not read from an IPv6 address: the IPv4 address some of them carry, and the /64 network each is in. */

/** The IPv4 address inside an IPv4-mapped IPv6 address (::ffff:a.b.c.d or ::ffff:xxxx:xxxx). */
export function embeddedIpv4(address: string): string | null {
  const lower = address.toLowerCase();
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (!hex) return null;
  const high = parseInt(hex[1], 16);
  const low = parseInt(hex[2], 16);
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

/** The /64 network of a valid IPv6 address, as `a:b:c:d::/64` (hextets without leading zeros; a zone id dropped). */
export function ipv6Prefix64(address: string): string {
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
