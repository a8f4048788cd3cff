// Protects: per-address limits count an IPv6 client per /64 (a host may take a new address in its /64 for every
// request), an IPv4-mapped address as its IPv4 address, and IPv4 as it is.
import { addressKey } from '../../src/rate-limit/client-address';

it('counts IPv6 addresses of one /64 as one client, and of another /64 apart', () => {
  const one = ['2001:db8:1:2::1', '2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:0db8:0001:0002:0000:0000:0000:0042', '2001:DB8:1:2::abcd%eth0', '2001:db8:1:2::192.0.2.1'];
  expect(new Set(one.map(addressKey))).toEqual(new Set(['2001:db8:1:2::/64']));
  expect(addressKey('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
  expect(addressKey('::1')).toBe('0:0:0:0::/64');
  expect(addressKey('fe80::1')).toBe('fe80:0:0:0::/64');
});

it('counts an IPv4-mapped address as its IPv4 address, and IPv4 or anything else as it is', () => {
  expect(addressKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
  expect(addressKey('203.0.113.7')).toBe('203.0.113.7');
  expect(addressKey('unknown')).toBe('unknown');
});
