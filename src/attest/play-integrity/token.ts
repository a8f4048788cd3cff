import { compactDecrypt, compactVerify } from 'jose';
import type { AttestReason } from '../reasons';
import { strictBase64url } from '../strict-base64';
import type { PlayIntegrityKeys } from './keys';

/**
 * Opens a classic Play Integrity token: a compact JWE (A256KW key wrap, A256GCM content) whose plaintext is a compact
 * JWS (ES256) whose payload is the verdict's JSON. Google: "The JSON payload is signed and encrypted as a nested JSON
 * Web Token (JWT), that is JWE of JWS. JWE uses A256KW as a key wrapping algorithm and A256GCM as a content encryption
 * algorithm. JWS uses ES256 as a signing algorithm."
 * Sources: https://developer.android.com/google/play/integrity/classic (token format, local decryption) and
 * https://developer.android.com/reference/unity/class/Google/Play/Integrity/IntegrityManager (the sentence above).
 *
 * Reasons: text that is not those shapes is `token_malformed`; a JWE that names other algorithms or does not open with
 * the app's key is `decrypt_failed`; a JWS that names another algorithm or whose signature does not verify with the
 * app's verification key is `signature_invalid`. The algorithms are read and refused here, before jose sees the token,
 * and jose is given the same one-entry allow-lists too, so neither alone decides what is accepted.
 */
export type OpenedToken = { payload: unknown } | { reason: AttestReason };

/** The spec's limit on `token` (openapi/v1.yaml, AttestRequest); a minted classic token is about 1,150 characters. */
export const MAX_TOKEN_LENGTH = 8192;
/** The verdict's JSON: it sits, encrypted and signed, inside a token of at most MAX_TOKEN_LENGTH characters. */
export const MAX_PAYLOAD_BYTES = 8192;

const JWE_ALG = 'A256KW';
const JWE_ENC = 'A256GCM';
const JWS_ALG = 'ES256';

export async function openClassicToken(token: unknown, keys: PlayIntegrityKeys): Promise<OpenedToken> {
  if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH) return { reason: 'token_malformed' };
  const jweParts = compactParts(token, 5, 1);
  if (!jweParts) return { reason: 'token_malformed' };
  const jweHeader = jsonObject(jweParts[0]);
  if (!jweHeader) return { reason: 'token_malformed' };
  if (jweHeader.alg !== JWE_ALG || jweHeader.enc !== JWE_ENC) return { reason: 'decrypt_failed' };

  let jws: string;
  try {
    const { plaintext } = await compactDecrypt(token, keys.decryptionKey, { keyManagementAlgorithms: [JWE_ALG], contentEncryptionAlgorithms: [JWE_ENC] });
    jws = Buffer.from(plaintext).toString('latin1');
  } catch {
    // Every input jose refuses here has already passed the shape checks above: a wrong key, a flipped byte, an IV or
    // tag of the wrong length, a `zip` or `crit` header. The app's key cannot open it, whatever the detail.
    return { reason: 'decrypt_failed' };
  }

  const jwsParts = compactParts(jws, 3, 2);
  if (!jwsParts) return { reason: 'token_malformed' };
  const jwsHeader = jsonObject(jwsParts[0]);
  if (!jwsHeader) return { reason: 'token_malformed' };
  if (jwsHeader.alg !== JWS_ALG) return { reason: 'signature_invalid' };
  let payloadBytes: Uint8Array;
  try {
    ({ payload: payloadBytes } = await compactVerify(jws, keys.verificationKey, { algorithms: [JWS_ALG] }));
  } catch {
    return { reason: 'signature_invalid' };
  }
  const payload = parseJson(payloadBytes);
  return payload === undefined ? { reason: 'token_malformed' } : { payload };
}

/**
 * The decoded parts of a compact serialization, or null: exactly `count` dot-separated parts of strict base64url,
 * none empty but the one at `mayBeEmpty`. That part is the one other algorithms leave empty (a `dir` JWE's encrypted
 * key, an `alg: none` JWS's signature), so that such a token is refused for its algorithm, not its shape.
 */
function compactParts(text: string, count: number, mayBeEmpty: number): Buffer[] | null {
  const parts = text.split('.', count + 1);
  if (parts.length !== count) return null;
  const decoded: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    if (parts[i] === '' && i !== mayBeEmpty) return null;
    const bytes = strictBase64url(parts[i]);
    if (!bytes) return null;
    decoded.push(bytes);
  }
  return decoded;
}

function jsonObject(bytes: Buffer): Record<string, unknown> | null {
  const value = parseJson(bytes);
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

/** JSON from UTF-8 bytes, or undefined: invalid UTF-8 is refused, not replaced, and the size is bounded. */
function parseJson(bytes: Uint8Array): unknown {
  if (bytes.length > MAX_PAYLOAD_BYTES) return undefined;
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return undefined;
  }
}
