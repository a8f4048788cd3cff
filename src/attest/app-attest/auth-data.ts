import { decodeStrictCbor } from '../cbor';

/**
 * Authenticator data, in the WebAuthn layout Apple reuses: rpIdHash (32) ‖ flags (1) ‖ counter (4, big-endian), then
 * in an attestation the attested credential data: aaguid (16) ‖ credentialId length (2) ‖ credentialId ‖ COSE key.
 * Readers return null for anything that is not that layout exactly (`token_malformed`).
 */
const HEADER = 37;
/** Flags: AT, attested credential data follows; ED, extensions follow (App Attest writes none). */
const FLAG_AT = 0x40;
const FLAG_ED = 0x80;
/** App Attest's credentialId is the keyId: a SHA-256. */
const CREDENTIAL_ID_LENGTH = 32;

export interface AttestedAuthData {
  raw: Buffer;
  rpIdHash: Buffer;
  signCount: number;
  aaguid: Buffer;
  credentialId: Buffer;
  /** The COSE key's P-256 point, uncompressed (0x04 ‖ x ‖ y). */
  point: Buffer;
}

export function readAttestedAuthData(raw: Buffer): AttestedAuthData | null {
  if (raw.length < HEADER + 16 + 2) return null;
  const flags = raw[32];
  if (!(flags & FLAG_AT) || flags & FLAG_ED) return null;
  if (raw.readUInt16BE(HEADER + 16) !== CREDENTIAL_ID_LENGTH) return null;
  const keyAt = HEADER + 16 + 2 + CREDENTIAL_ID_LENGTH;
  // The COSE key must end exactly where authData ends: the strict decoder refuses trailing bytes.
  const point = coseP256Point(raw.subarray(keyAt));
  if (!point) return null;
  return {
    raw,
    rpIdHash: raw.subarray(0, 32),
    signCount: raw.readUInt32BE(33),
    aaguid: raw.subarray(HEADER, HEADER + 16),
    credentialId: raw.subarray(HEADER + 18, keyAt),
    point,
  };
}

/**
 * An assertion's authenticatorData: the 37-byte header only. Its flags have AT set although no credential data
 * follows (every real assertion does this), so flags are not read.
 */
export function readAssertionAuthData(raw: Buffer): { rpIdHash: Buffer; counter: number } | null {
  if (raw.length !== HEADER) return null;
  return { rpIdHash: raw.subarray(0, 32), counter: raw.readUInt32BE(33) };
}

/** COSE_Key (RFC 9053) of an ES256 P-256 key, exactly {1: 2 (EC2), 3: -7 (ES256), -1: 1 (P-256), -2: x, -3: y}. */
function coseP256Point(bytes: Buffer): Buffer | null {
  let key: unknown;
  try {
    key = decodeStrictCbor(bytes, { maxDepth: 1 });
  } catch {
    return null; // CborError: the only error the decoder throws
  }
  if (!(key instanceof Map) || key.size !== 5 || key.get(1) !== 2 || key.get(3) !== -7 || key.get(-1) !== 1) return null;
  const x: unknown = key.get(-2);
  const y: unknown = key.get(-3);
  if (!Buffer.isBuffer(x) || !Buffer.isBuffer(y) || x.length !== 32 || y.length !== 32) return null;
  return Buffer.concat([Buffer.from([0x04]), x, y]);
}
