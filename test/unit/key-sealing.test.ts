// Protects: sealing of private JWKs (src/crypto/key-sealing.ts): what is sealed opens with the same key-encryption
// key and key id, and with nothing else; the sealed form carries no part of the key in the clear; a truncated GCM
// tag is refused.
import { randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import { openJwk, sealJwk } from '../../src/crypto/key-sealing';

it('opens what it sealed, only with the same key and key id', async () => {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(privateKey);
  const kek = randomBytes(32);
  const sealed = sealJwk(jwk, kek, 'sk_one');
  expect(JSON.stringify(sealed)).not.toContain(jwk.d!);
  expect(openJwk(sealed, kek, 'sk_one')).toEqual(jwk);
  expect(() => openJwk(sealed, randomBytes(32), 'sk_one')).toThrow();
  expect(() => openJwk(sealed, kek, 'sk_two')).toThrow(); // moved onto another key's record
  const flipped = Buffer.from(sealed.data, 'base64url');
  flipped[0] ^= 1;
  const tampered = { ...sealed, data: flipped.toString('base64url') };
  expect(() => openJwk(tampered, kek, 'sk_one')).toThrow();
});

it('seals the same key differently each time (a fresh nonce)', async () => {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(privateKey);
  const kek = randomBytes(32);
  expect(sealJwk(jwk, kek, 'k').data).not.toBe(sealJwk(jwk, kek, 'k').data);
});

it('refuses a tag shorter than 16 bytes, even one that is a true prefix of the real tag', async () => {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(privateKey);
  const kek = randomBytes(32);
  const sealed = sealJwk(jwk, kek, 'k');
  const tag = Buffer.from(sealed.tag, 'base64url');
  for (const length of [4, 8, 12, 15]) {
    const truncated = { ...sealed, tag: tag.subarray(0, length).toString('base64url') };
    expect(() => openJwk(truncated, kek, 'k')).toThrow(/tag/);
  }
  expect(openJwk(sealed, kek, 'k')).toEqual(jwk);
});
