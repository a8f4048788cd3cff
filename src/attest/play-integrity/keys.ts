import { createPublicKey, type KeyObject } from 'node:crypto';
import { strictBase64 } from '../strict-base64';

/**
 * An app's Play Integrity keys, as Play Console gives them (App integrity > Play Integrity API > "Manage and download
 * response encryption keys"): the AES-256 key that opens the JWE and the EC P-256 public key that checks the JWS in
 * it. Google's classic-request page says both are "base64-encoded using default flags", loaded in Java with
 * `SecretKeySpec(…, "AES")` and `X509EncodedKeySpec`, so the verification key is a DER SubjectPublicKeyInfo.
 * Source: https://developer.android.com/google/play/integrity/classic ("Decrypt and verify the integrity verdict").
 */
export interface PlayIntegrityKeys {
  /** The 32 raw bytes of the AES-256 key (A256KW unwraps the content key with it). */
  decryptionKey: Uint8Array;
  /** The EC P-256 public key that verifies the ES256 signature inside the JWE. */
  verificationKey: KeyObject;
}

export type KeyFieldError = { pointer: string; message: string };

const POINTER = '/android/playIntegrity';
/** Far above what either key needs (44 and 124 characters), so a pasted document is refused before it is decoded. */
const MAX_KEY_TEXT = 1024;

/**
 * Reads the two keys of an app's configuration. Each refusal names its field by JSON pointer; no message ever quotes
 * the text it refuses, because the decryption key is a secret that would otherwise reach a 422 body or a log.
 * Strict base64 (src/attest/strict-base64.ts): Node's decoder would otherwise read a mistyped key as some other key.
 */
export function parsePlayIntegrityKeys(input: { decryptionKey: string; verificationKey: string }): { keys?: PlayIntegrityKeys; errors: KeyFieldError[] } {
  const errors: KeyFieldError[] = [];
  const decryptionKey = readAesKey(input?.decryptionKey);
  if (!decryptionKey) errors.push({ pointer: `${POINTER}/decryptionKey`, message: 'must be the base64 text of a 32-byte AES key, as Play Console gives it' });
  const verificationKey = readVerificationKey(input?.verificationKey);
  if (!verificationKey) {
    errors.push({ pointer: `${POINTER}/verificationKey`, message: 'must be the base64 text of the DER SubjectPublicKeyInfo of an EC P-256 public key, as Play Console gives it' });
  }
  if (!decryptionKey || !verificationKey) return { errors };
  return { keys: { decryptionKey, verificationKey }, errors };
}

function readAesKey(text: unknown): Uint8Array | null {
  if (typeof text !== 'string' || text.length > MAX_KEY_TEXT) return null;
  const bytes = strictBase64(text);
  return bytes && bytes.length === 32 ? new Uint8Array(bytes) : null;
}

function readVerificationKey(text: unknown): KeyObject | null {
  if (typeof text !== 'string' || text.length > MAX_KEY_TEXT) return null;
  const der = strictBase64(text);
  if (!der || der.length === 0) return null;
  try {
    const key = createPublicKey({ key: der, format: 'der', type: 'spki' });
    if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') return null;
    // OpenSSL reads a DER prefix and ignores what follows it: the key must be exactly its own encoding, no more.
    return key.export({ format: 'der', type: 'spki' }).equals(der) ? key : null;
  } catch {
    return null;
  }
}
