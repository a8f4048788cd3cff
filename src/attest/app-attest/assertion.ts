import { type KeyObject, createPublicKey, verify } from 'node:crypto';
import { decodeStrictCbor } from '../cbor';
import { DER, children, readWhole } from '../der';
import type { AttestReason } from '../reasons';
import { type AppAttestApp, type AppAttestKey, rpIdHashOf, sha256 } from './app';
import { readAssertionAuthData } from './auth-data';

export interface AppAssertionInput {
  /** The assertion's CBOR bytes. */
  assertion: Buffer;
  /** SHA-256 of the nonce's UTF-8 bytes. */
  clientDataHash: Buffer;
  app: AppAttestApp;
  /** The key registered for the keyId the client sent. */
  key: AppAttestKey;
}

/** A DER ECDSA P-256 signature: SEQUENCE { r INTEGER, s INTEGER }, at most 72 bytes. */
const MAX_SIGNATURE = 72;

/**
 * Apple's assertion checks (https://developer.apple.com/documentation/devicecheck/validating-apps-that-connect-to-your-server,
 * "Verify the assertion"), cheap ones first: the shape, then the rpIdHash (step 4), then the signature (steps 1 to 3).
 * The counter (step 5) is returned, when no reason fired, for the caller to compare and swap with the stored one;
 * step 6, the challenge, is the caller's too: the clientDataHash it passes is its own nonce's. Never throws.
 */
export function verifyAppAssertion(input: AppAssertionInput): { reasons: AttestReason[]; counter?: number } {
  const read = readAssertion(input.assertion);
  if (!read) return { reasons: ['token_malformed'] };
  if (!read.authData.rpIdHash.equals(rpIdHashOf(input.app))) return { reasons: ['team_mismatch'] };
  const key = p256Key(input.key.publicKeySpki);
  if (!key) return { reasons: ['key_unknown'] };
  // The device signs nonce = SHA-256(authenticatorData ‖ clientDataHash) with ECDSA-SHA256, hashing it once more.
  const nonce = sha256(read.raw, input.clientDataHash);
  if (!signatureVerifies(key, nonce, read.signature)) return { reasons: ['signature_invalid'] };
  return { reasons: [], counter: read.authData.counter };
}

/** `{ signature, authenticatorData }` exactly, or null. */
function readAssertion(bytes: Buffer): { signature: Buffer; raw: Buffer; authData: { rpIdHash: Buffer; counter: number } } | null {
  try {
    const top = decodeStrictCbor(bytes);
    if (!(top instanceof Map) || top.size !== 2) return null;
    const signature: unknown = top.get('signature');
    const raw: unknown = top.get('authenticatorData');
    if (!Buffer.isBuffer(signature) || !Buffer.isBuffer(raw) || signature.length > MAX_SIGNATURE) return null;
    const sig = children(signature, readWhole(signature, DER.SEQUENCE));
    if (sig.length !== 2 || sig.some((t) => t.tag !== DER.INTEGER)) return null;
    const authData = readAssertionAuthData(raw);
    return authData && { signature, raw, authData };
  } catch {
    return null; // CborError or StrictDerError: not an assertion
  }
}

/** The registered key, if it is a P-256 public key Node can read; the service stored it, but trusts nothing. */
function p256Key(spki: Buffer): KeyObject | null {
  try {
    const key = createPublicKey({ key: spki, format: 'der', type: 'spki' });
    return key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1' ? key : null;
  } catch {
    return null;
  }
}

/** OpenSSL may refuse a signature with an error rather than false (an INTEGER it cannot read): both mean invalid. */
function signatureVerifies(key: KeyObject, data: Buffer, signature: Buffer): boolean {
  try {
    return verify('sha256', data, { key, dsaEncoding: 'der' }, signature);
  } catch {
    return false;
  }
}
