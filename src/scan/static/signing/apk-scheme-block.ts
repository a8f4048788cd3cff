import { X509Certificate } from 'node:crypto';
import { LIMITS } from '../package/limits';
import { FormatError, Reader } from './length-prefixed';
import { readLineage } from './lineage';
import { APK_SIGNATURE_ALGORITHMS, publicKeyOf, signaturesToVerify, verifyApkSignature, type ApkDigestAlgorithm, type ApkSignatureAlgorithm } from './signature-algorithms';

/** One signer of a v2, v3 or v3.1 block, as far as it was read. */
export type SchemeSigner = {
  /** 1-based, as findings name signers. */
  index: number;
  certs: Buffer[];
  minSdk: number;
  maxSdk: number;
  /** Declared content digests by signature algorithm id. */
  digests: Array<{ algorithmId: number; digest: Buffer }>;
  /** Content digests its verified signatures vouch for. */
  verifiedDigests: Set<ApkDigestAlgorithm>;
  /** v3: the proof-of-rotation certificates, oldest first; null without one. */
  lineage: Buffer[] | null;
  /** v2: scheme ids named by the stripping-protection attribute. v3.0: the rotation-min-sdk attribute. */
  strippingSchemeIds: number[];
  rotationMinSdk: number | null;
};

export type SchemeParse = { signers: SchemeSigner[]; errors: Array<{ signer: number | null; check: string }> };

const STRIPPING_PROTECTION_ATTR = 0xbeeff00d;
const PROOF_OF_ROTATION_ATTR = 0x3ba06f8c;
const ROTATION_MIN_SDK_ATTR = 0x559f8b02;
const MAX_SIGNERS = 10;
const MAX_RECORDS = 64;

/**
 * Parses the signers of an APK Signature Scheme v2 (`v3: false`) or v3/v3.1 block and verifies each signer's
 * signature over its signed data, its certificate against its public key, and (v3) its SDK range records, as apksig's
 * V2SchemeVerifier and V3SchemeVerifier do. It does not digest the package: each signer's verifiedDigests say which
 * content digests must then be computed and compared. Which signatures are verified depends on the platform range:
 * a v2 signer's is `v2Range` (the verified range from Android 7.0), a v3 signer's its own SDK range.
 */
export function parseSchemeBlock(block: Buffer, v3: boolean, v2Range: { minSdk: number; maxSdk: number }): SchemeParse {
  const errors: SchemeParse['errors'] = [];
  const signers: SchemeSigner[] = [];
  let list: Buffer[];
  try {
    list = new Reader(new Reader(block).prefixed()).all(MAX_SIGNERS + 1);
  } catch {
    return { signers, errors: [{ signer: null, check: 'malformed list of signers' }] };
  }
  if (list.length === 0) return { signers, errors: [{ signer: null, check: 'no signers' }] };
  if (list.length > MAX_SIGNERS) return { signers, errors: [{ signer: null, check: `more than ${MAX_SIGNERS} signers` }] };
  for (const [i, bytes] of list.entries()) {
    const signer: SchemeSigner = { index: i + 1, certs: [], minSdk: 0, maxSdk: 0, digests: [], verifiedDigests: new Set(), lineage: null, strippingSchemeIds: [], rotationMinSdk: null };
    signers.push(signer);
    let check: string | null;
    try {
      check = parseSigner(bytes, signer, v3, v2Range);
    } catch (err) {
      if (!(err instanceof FormatError)) throw err;
      check = `malformed signer (${err.message})`;
    }
    if (check) {
      errors.push({ signer: signer.index, check });
      break; // apksig stops at the first signer in error
    }
  }
  return { signers, errors };
}

/** Null when the signer verifies; else the check that failed. */
function parseSigner(bytes: Buffer, signer: SchemeSigner, v3: boolean, v2Range: { minSdk: number; maxSdk: number }): string | null {
  const r = new Reader(bytes);
  const signedData = r.prefixed();
  if (v3) {
    signer.minSdk = r.i32();
    signer.maxSdk = r.i32();
    if (signer.minSdk < 0 || signer.minSdk > signer.maxSdk) return `invalid SDK range ${signer.minSdk}-${signer.maxSdk}`;
  }
  const signatures = new Reader(r.prefixed()).all(MAX_RECORDS).map((record) => {
    const s = new Reader(record);
    const algorithmId = s.u32();
    return { algorithmId, signature: s.prefixed(), algorithm: APK_SIGNATURE_ALGORITHMS.get(algorithmId) };
  });
  const publicKeyBytes = r.prefixed();
  if (signatures.length === 0) return 'no signatures';
  const supported = signatures.filter((s): s is typeof s & { algorithm: ApkSignatureAlgorithm } => !!s.algorithm);
  const range = v3 ? signer : v2Range;
  const toVerify = signaturesToVerify(supported, range.minSdk, range.maxSdk);
  if (!toVerify) return `no supported signature algorithm for API levels ${range.minSdk}-${range.maxSdk}`;
  const key = publicKeyOf(publicKeyBytes);
  if (!key) return 'malformed public key';
  for (const s of toVerify) {
    if (!verifyApkSignature(s.algorithm, key, signedData, s.signature)) return `${s.algorithm.name} signature over signed data did not verify`;
    signer.verifiedDigests.add(s.algorithm.digest);
  }
  const d = new Reader(signedData);
  const digests = new Reader(d.prefixed());
  const certificates = new Reader(d.prefixed());
  if (v3) {
    if (d.i32() !== signer.minSdk) return 'minSdkVersion differs between the signer and its signed data';
    if (d.i32() !== signer.maxSdk) return 'maxSdkVersion differs between the signer and its signed data';
  }
  const attributes = new Reader(d.prefixed());
  signer.certs = certificates.all(LIMITS.certificatesPerFile);
  if (signer.certs.length === 0) return 'no certificates';
  const certKey = certificatePublicKey(signer.certs[0]);
  if (!certKey) return 'certificate #1 cannot be parsed';
  if (!certKey.equals(publicKeyBytes)) return 'the certificate does not match the public key of the signature record';
  for (const record of digests.all(MAX_RECORDS)) {
    const x = new Reader(record);
    signer.digests.push({ algorithmId: x.u32(), digest: x.prefixed() });
  }
  const signed = signatures.map((s) => s.algorithmId).join(',');
  if (signer.digests.map((x) => x.algorithmId).join(',') !== signed) return 'signature algorithms differ between the signatures and digests records';
  for (const record of attributes.all(MAX_RECORDS)) {
    const a = new Reader(record);
    const id = a.u32();
    const value = record.subarray(4);
    if (!v3 && id === STRIPPING_PROTECTION_ATTR && value.length >= 4) signer.strippingSchemeIds.push(value.readInt32LE(0));
    if (v3 && id === ROTATION_MIN_SDK_ATTR && value.length >= 4) signer.rotationMinSdk = value.readInt32LE(0);
    if (v3 && id === PROOF_OF_ROTATION_ATTR) {
      const lineage = readLineage(value);
      if (typeof lineage === 'string') return lineage;
      if (!lineage[lineage.length - 1]?.equals(signer.certs[0])) return 'the proof-of-rotation does not end with the signer\'s certificate';
      signer.lineage = lineage;
    }
  }
  return null;
}

/** SubjectPublicKeyInfo of a certificate, encoded as Java's getPublicKey().getEncoded() encodes it. */
function certificatePublicKey(der: Buffer): Buffer | null {
  try {
    return new X509Certificate(der).publicKey.export({ type: 'spki', format: 'der' });
  } catch {
    return null;
  }
}
