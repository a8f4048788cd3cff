// Protects: webhook deliveries never reach a private, loopback, link-local, unique-local, shared (CGNAT), multicast or
// unspecified address, IPv4 or IPv6 (v4-mapped too), and a loopback receiver is allowed only with the test flag; the
// signature is Standard Webhooks' (HMAC-SHA256 keyed with the secret's decoded bytes over "<id>.<timestamp>.<body>").
// No traffic leaves the machine: literal addresses are checked without DNS.
import { createHmac } from 'node:crypto';
import { isPublicAddress } from '../../src/webhooks/address-policy';
import { resolveAllowed, RefusedAddressError, withinMs } from '../../src/webhooks/send';
import { newWebhookSecret, secretBytes, signDelivery } from '../../src/webhooks/signature';

it.each([
  '10.0.0.1',
  '172.16.5.4',
  '192.168.1.1',
  '127.0.0.1',
  '169.254.169.254',
  '100.64.0.1',
  '0.0.0.0',
  '224.0.0.1',
  '255.255.255.255',
  '::1',
  '::',
  'fd00::1',
  'fc00::1',
  'fe80::1',
  'ff02::1',
  '::ffff:127.0.0.1',
  '::ffff:10.0.0.1',
  '::ffff:7f00:1',
  '::ffff:a9fe:a9fe',
  '::7f00:1', // IPv4-compatible loopback
  '::127.0.0.1',
  '::ffff:0:7f00:1', // IPv4-translated loopback
  '64:ff9b:1::a00:1', // local-use NAT64
  '64:ff9b::7f00:1', // NAT64
  'fec0::1', // site-local
  'not an address',
])('refuses %s', (address) => {
  expect(isPublicAddress(address)).toBe(false);
});

it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows the public address %s', (address) => {
  expect(isPublicAddress(address)).toBe(true);
});

it('refuses a loopback literal unless the test flag allows it, and never a private one', async () => {
  await expect(resolveAllowed('127.0.0.1', false)).rejects.toBeInstanceOf(RefusedAddressError);
  await expect(resolveAllowed('[::1]', false)).rejects.toBeInstanceOf(RefusedAddressError);
  await expect(resolveAllowed('127.0.0.1', true)).resolves.toEqual({ address: '127.0.0.1', family: 4 });
  await expect(resolveAllowed('10.0.0.1', true)).rejects.toBeInstanceOf(RefusedAddressError);
  await expect(resolveAllowed('169.254.169.254', true)).rejects.toBeInstanceOf(RefusedAddressError);
  // A name that resolves to loopback (the hosts file, no network) is refused like the literal.
  await expect(resolveAllowed('localhost', false)).rejects.toBeInstanceOf(RefusedAddressError);
});

it('signs as Standard Webhooks specifies and accepts only canonical whsec_ secrets of 24 to 64 bytes', () => {
  // The example secret of the Standard Webhooks specification.
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const key = secretBytes(secret)!;
  expect(key).toEqual(Buffer.from('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'base64'));
  const body = '{"type":"threat.opened"}';
  const expected = createHmac('sha256', key).update(`msg_1.1614265330.${body}`).digest('base64');
  expect(signDelivery(key, 'msg_1', 1614265330, body)).toBe(`v1,${expected}`);
  // The specification's published test vector.
  expect(signDelivery(key, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  expect(secretBytes(newWebhookSecret())!.length).toBe(32);
  expect(secretBytes(`whsec_${Buffer.alloc(23, 1).toString('base64')}`)).toBeNull();
  expect(secretBytes(`whsec_${Buffer.alloc(65, 1).toString('base64')}`)).toBeNull();
  expect(secretBytes(Buffer.alloc(32, 1).toString('base64'))).toBeNull();
});

it('ends a name resolution that never answers within the attempt budget, and passes one that does', async () => {
  await expect(withinMs(new Promise(() => undefined), 50, 'no answer within 50 ms')).rejects.toThrow('no answer within 50 ms');
  await expect(withinMs(Promise.resolve({ address: '93.184.216.34', family: 4 }), 50, 'late')).resolves.toEqual({ address: '93.184.216.34', family: 4 });
});
