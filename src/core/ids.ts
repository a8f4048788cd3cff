import { createHash, randomBytes } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Random alphanumeric text (no "_" or "-", so ids can be split on "_" safely). */
export function randomAlnum(length: number): string {
  // 248 = 62 * 4: rejecting bytes above it keeps every character equally likely.
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

export type IdPrefix = 'app' | 'key' | 'bld' | 'scn' | 'thr' | 'rul' | 'aud' | 'stf' | 'job' | 'whk' | 'whd' | 'atk' | 'sup';

/** Public resource ids: a type prefix and 20 random characters, e.g. bld_4fZ0... */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomAlnum(20)}`;
}

/**
 * An id derived from `key` in the same shape as newId (a prefix and 20 alphanumerics): the same key always gives the
 * same id, so a write that may be retried (by another instance, after a crash) is made once by a unique _id.
 */
export function derivedId(prefix: IdPrefix, key: string): string {
  const digest = createHash('sha256').update(key).digest();
  let out = '';
  for (let i = 0; out.length < 20; i++) out += ALPHABET[digest[i] % 62];
  return `${prefix}_${out}`;
}
