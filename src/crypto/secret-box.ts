import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * A secret as stored (a webhook's signing secret, an app's Play Integrity decryption key): sealed with the key-encryption
 * key (AES-256-GCM, bound to the id of the record that holds it, so a sealed value copied to another record does not
 * open), or in the clear when no key-encryption key is set.
 */
export type StoredSecret = { alg: 'A256GCM'; iv: string; data: string; tag: string } | { alg: 'none'; data: string };

const TAG_BYTES = 16;

export function sealSecret(secret: string, kek: Buffer | null, recordId: string): StoredSecret {
  if (!kek) return { alg: 'none', data: Buffer.from(secret, 'utf8').toString('base64url') };
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', kek, iv);
  cipher.setAAD(Buffer.from(recordId, 'utf8'));
  const data = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return { alg: 'A256GCM', iv: iv.toString('base64url'), data: data.toString('base64url'), tag: cipher.getAuthTag().toString('base64url') };
}

/** Throws when the secret was sealed under another key or for another record. */
export function openSecret(stored: StoredSecret, kek: Buffer | null, recordId: string): string {
  if (stored.alg === 'none') return Buffer.from(stored.data, 'base64url').toString('utf8');
  if (!kek) throw new Error(`${recordId} has a sealed secret and no KEY_ENCRYPTION_KEY is set`);
  const decipher = createDecipheriv('aes-256-gcm', kek, Buffer.from(stored.iv, 'base64url'), { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(recordId, 'utf8'));
  decipher.setAuthTag(Buffer.from(stored.tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(stored.data, 'base64url')), decipher.final()]).toString('utf8');
}
