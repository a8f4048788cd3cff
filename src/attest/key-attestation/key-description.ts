import { AsnConvert } from '@peculiar/asn1-schema';
import {
  NonStandardKeyDescription,
  type NonStandardAuthorizationList,
  type AuthorizationList,
  type RootOfTrust,
} from '@peculiar/asn1-android';
import { DER, StrictDerError, bodyOf, children, readWhole, type CertificateParts } from '../der';

/**
 * The KeyDescription a keystore writes into the certificate of a key it attests (extension 1.3.6.1.4.1.11129.2.1.17;
 * schema in https://source.android.com/docs/security/features/keystore/attestation#schema). Read with
 * @peculiar/asn1-android, which knows every version up to KeyMint 400, but asn1js under it reads BER leniently (a
 * non-minimal length, an indefinite length, trailing bytes, BOOLEAN true as 0x01 all parse): the value must encode
 * back to the same bytes, or it is not the DER a keystore writes.
 * Anything that does not read throws; the engine turns that into `token_malformed`.
 */
export const KEY_DESCRIPTION_OID = '1.3.6.1.4.1.11129.2.1.17';

/** KeyPurpose ATTEST_KEY (KeyMint 2, Android 12): a key that attests other keys of the same keystore. */
const ATTEST_KEY = 7;

export interface KeyDescription {
  parsed: NonStandardKeyDescription;
  /** The AuthorizationLists: what the secure hardware enforces, and what only Android's keystore says. */
  hardware: NonStandardAuthorizationList;
  software: NonStandardAuthorizationList;
}

/**
 * The attestationChallenge of a KeyDescription (its fifth field: version, security level, keymaster version, keymaster
 * security level, challenge), read by the strict DER reader alone: what the engine compares before anything costly.
 * Null when the value is not a SEQUENCE whose fifth field is an OCTET STRING; readKeyDescription then decides.
 */
export function attestationChallengeOf(parts: CertificateParts): Buffer | null {
  const ext = parts.extensions.get(KEY_DESCRIPTION_OID);
  if (!ext) return null;
  try {
    const fields = children(ext.value, readWhole(ext.value, DER.SEQUENCE));
    const challenge = fields[4];
    return challenge?.tag === DER.OCTET_STRING ? ext.value.subarray(challenge.body, challenge.end) : null;
  } catch {
    return null;
  }
}

/** The KeyDescription of a certificate, or null when it carries none. */
export function readKeyDescription(parts: CertificateParts): KeyDescription | null {
  const ext = parts.extensions.get(KEY_DESCRIPTION_OID);
  if (!ext) return null;
  // A copy: asn1js reads the whole ArrayBuffer under a view on some paths, and `ext.value` is a view into the chain.
  const raw = new Uint8Array(ext.value);
  const parsed = AsnConvert.parse(raw, NonStandardKeyDescription);
  if (!Buffer.from(AsnConvert.serialize(parsed)).equals(raw)) throw new StrictDerError('KeyDescription is not canonical DER');
  // The lenient reader (any field order, because some keystores write them out of order) would also take a tag
  // twice, and then a lookup answers with whichever came first: a list must name each tag once.
  for (const list of [parsed.softwareEnforced, parsed.teeEnforced]) {
    const seen = new Set<string>();
    for (const item of list) {
      for (const [key, value] of Object.entries(item)) {
        if (value === undefined) continue;
        if (seen.has(key)) throw new StrictDerError(`AuthorizationList names ${key} twice`);
        seen.add(key);
      }
    }
  }
  return { parsed, hardware: parsed.teeEnforced, software: parsed.softwareEnforced };
}

/** A property the secure hardware enforces (teeEnforced, named hardwareEnforced since KeyMint 300). */
export function hardwareProperty<K extends keyof AuthorizationList>(kd: KeyDescription, key: K): AuthorizationList[K] | undefined {
  return kd.hardware.findProperty(key);
}

/**
 * Whether the certificate attests an ATTEST_KEY: the purposes its hardware enforces are exactly {ATTEST_KEY}, the rule
 * of Google's own verifier (ParsedAttestationRecord); such a key may sign the certificate below it in place of a CA.
 */
export function isAttestKey(kd: KeyDescription | null): boolean {
  const purposes = kd ? [...(hardwareProperty(kd, 'purpose') ?? [])] : [];
  return purposes.length === 1 && purposes[0] === ATTEST_KEY;
}

/** The bytes of an OCTET STRING as @peculiar returns it: its typings say OctetString, some fields arrive as ArrayBuffer. */
export function octets(value: { buffer: ArrayBuffer } | ArrayBuffer): Buffer {
  return Buffer.from(value instanceof ArrayBuffer ? value : value.buffer);
}

/** The device state a RootOfTrust states, comparable across the KeyDescriptions of one chain. */
export function rootOfTrustKey(rot: RootOfTrust | undefined): string {
  if (!rot) return 'none';
  const hash = rot.verifiedBootHash ? octets(rot.verifiedBootHash).toString('hex') : '';
  return [octets(rot.verifiedBootKey).toString('hex'), rot.deviceLocked, rot.verifiedBootState, hash].join('/');
}

export interface ApplicationId {
  packages: { name: Buffer; version: bigint }[];
  /** SHA-256 of each certificate the package is signed with, lowercase hex. */
  signatureDigests: string[];
}

/**
 * The attestationApplicationId ([709], an OCTET STRING holding DER):
 * `SEQUENCE { packageInfos SET OF SEQUENCE { packageName OCTET STRING, version INTEGER }, signatureDigests SET OF OCTET STRING }`.
 * Its tags are all single-byte universal ones, so the strict reader reads it directly, lengths and all.
 */
export function readApplicationId(der: Buffer): ApplicationId {
  const top = children(der, readWhole(der, DER.SEQUENCE));
  if (top.length !== 2 || top[0].tag !== DER.SET || top[1].tag !== DER.SET) throw new StrictDerError('bad attestationApplicationId');
  const packages = children(der, top[0]).map((info) => {
    const fields = info.tag === DER.SEQUENCE ? children(der, info) : [];
    if (fields.length !== 2 || fields[0].tag !== DER.OCTET_STRING || fields[1].tag !== DER.INTEGER) {
      throw new StrictDerError('bad AttestationPackageInfo');
    }
    return { name: bodyOf(der, fields[0]), version: readInteger(bodyOf(der, fields[1])) };
  });
  const signatureDigests = children(der, top[1]).map((d) => {
    if (d.tag !== DER.OCTET_STRING) throw new StrictDerError('bad signature digest');
    return bodyOf(der, d).toString('hex');
  });
  return { packages, signatureDigests };
}

/** A DER INTEGER's contents: two's complement, in the fewest bytes (X.690 8.3.2). */
function readInteger(body: Buffer): bigint {
  if (body.length === 0 || body.length > 16) throw new StrictDerError('bad INTEGER');
  if (body.length > 1 && ((body[0] === 0 && body[1] < 0x80) || (body[0] === 0xff && body[1] >= 0x80))) {
    throw new StrictDerError('INTEGER not minimal');
  }
  const unsigned = BigInt(`0x${body.toString('hex')}`);
  return body[0] & 0x80 ? unsigned - (1n << BigInt(body.length * 8)) : unsigned;
}
