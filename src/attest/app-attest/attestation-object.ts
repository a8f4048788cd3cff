import { X509Certificate } from 'node:crypto';
import { decodeStrictCbor } from '../cbor';
import { DER, bodyOf, certificateParts, children, readTlv, readWhole } from '../der';
import { type AttestedAuthData, readAttestedAuthData } from './auth-data';

/**
 * The attestation object, read without trusting it: exactly the shape Apple sends, or null (`token_malformed`).
 *   { fmt: "apple-appattest", attStmt: { x5c: [credCert, intermediate], receipt: bytes }, authData: bytes }
 * The root is not in x5c: it is configured. The receipt is BER (it starts with an indefinite length) and is only
 * required to be a byte string: nothing here reads it.
 */
export interface AttestationParts {
  cred: X509Certificate;
  intermediate: X509Certificate;
  authData: AttestedAuthData;
  /** The credCert's nonce extension, null when it has none. */
  nonce: Buffer | null;
  /** credCert's public key: its uncompressed P-256 point, and as DER SPKI. */
  point: Buffer;
  spki: Buffer;
}

/** Apple's nonce extension in the credential certificate. */
const NONCE_OID = '1.2.840.113635.100.8.2';

export function readAttestationObject(object: Buffer): AttestationParts | null {
  try {
    return read(object);
  } catch {
    // The strict readers' refusals (CborError, StrictDerError), and Node refusing a certificate or key its own way:
    // whichever part of the token could not be read, the token could not, and the engine answers, never throws.
    return null;
  }
}

function read(object: Buffer): AttestationParts | null {
  const top = decodeStrictCbor(object);
  if (!hasExactly(top, ['fmt', 'attStmt', 'authData']) || top.get('fmt') !== 'apple-appattest') return null;
  const attStmt = top.get('attStmt');
  const authDataBytes = top.get('authData');
  if (!hasExactly(attStmt, ['x5c', 'receipt']) || !Buffer.isBuffer(attStmt.get('receipt')) || !Buffer.isBuffer(authDataBytes)) return null;
  const x5c = attStmt.get('x5c');
  if (!Array.isArray(x5c) || x5c.length !== 2 || !x5c.every((c) => Buffer.isBuffer(c))) return null;
  const authData = readAttestedAuthData(authDataBytes);
  if (!authData) return null;

  // The strict DER reader goes first (definite, minimal lengths, nothing trailing), so Node's parser never sees BER.
  const [credDer, intermediateDer] = x5c as Buffer[];
  const credParts = certificateParts(credDer);
  certificateParts(intermediateDer);
  const nonceExt = credParts.extensions.get(NONCE_OID);
  const nonce = nonceExt ? nonceOf(nonceExt.value) : null;
  if (nonce === undefined) return null;

  const cred = new X509Certificate(credDer);
  const intermediate = new X509Certificate(intermediateDer);
  const key = cred.publicKey;
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') return null;
  const jwk = key.export({ format: 'jwk' });
  const point = Buffer.concat([Buffer.from([0x04]), Buffer.from(jwk.x ?? '', 'base64url'), Buffer.from(jwk.y ?? '', 'base64url')]);
  if (point.length !== 65) return null;
  return { cred, intermediate, authData, nonce, point, spki: key.export({ type: 'spki', format: 'der' }) };
}

/** A CBOR map with exactly these text keys. */
function hasExactly(value: unknown, keys: readonly string[]): value is Map<unknown, unknown> {
  return value instanceof Map && value.size === keys.length && keys.every((k) => value.has(k));
}

/**
 * The nonce extension's value: SEQUENCE { [1] EXPLICIT OCTET STRING (32 bytes) }, i.e. `30 24 a1 22 04 20 <32>`.
 * Undefined when the extension is there but not that shape.
 */
function nonceOf(value: Buffer): Buffer | undefined {
  const seq = readWhole(value, DER.SEQUENCE);
  const [tagged, ...rest] = children(value, seq);
  if (!tagged || rest.length > 0 || tagged.tag !== 0xa1) return undefined;
  const octets = readTlv(value, tagged.body, tagged.end);
  if (octets.tag !== DER.OCTET_STRING || octets.end !== tagged.end || octets.end - octets.body !== 32) return undefined;
  return bodyOf(value, octets);
}
