import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { JWK } from 'jose';

/** A private JWK encrypted with the key-encryption key (AES-256-GCM), bound to its key id. */
export interface SealedJwk {
  alg: 'A256GCM';
  iv: string; // base64url, 12 bytes
  data: string; // base64url ciphertext of the JWK's JSON
  tag: string; // base64url, 16 bytes
}

/**
 * Seals a private key for storage. The key id is the additional authenticated data: a sealed key copied onto another
 * key's record does not open.
 */
export function sealJwk(jwk: JWK, kek: Buffer, kid: string): SealedJwk {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', kek, iv);
  cipher.setAAD(Buffer.from(kid, 'utf8'));
  const data = Buffer.concat([cipher.update(JSON.stringify(jwk), 'utf8'), cipher.final()]);
  return { alg: 'A256GCM', iv: iv.toString('base64url'), data: data.toString('base64url'), tag: cipher.getAuthTag().toString('base64url') };
}

/** GCM's full tag. A shorter one is accepted by Node unless told otherwise, and a 4-byte tag is forged in 2^32 tries. */
const TAG_BYTES = 16;

/** Opens a sealed key; throws when the key-encryption key (or the key id) is not the one it was sealed with. */
export function openJwk(sealed: SealedJwk, kek: Buffer, kid: string): JWK {
  const tag = Buffer.from(sealed.tag, 'base64url');
  if (tag.length !== TAG_BYTES) throw new Error(`sealed key ${kid} has a ${tag.length}-byte tag; only ${TAG_BYTES} bytes are accepted`);
  // authTagLength spelled out even though the length was checked: the decipher itself refuses any other length.
  const decipher = createDecipheriv('aes-256-gcm', kek, Buffer.from(sealed.iv, 'base64url'), { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(kid, 'utf8'));
  decipher.setAuthTag(tag);
  const json = Buffer.concat([decipher.update(Buffer.from(sealed.data, 'base64url')), decipher.final()]).toString('utf8');
  return JSON.parse(json) as JWK;
}
