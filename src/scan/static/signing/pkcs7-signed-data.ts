import { LIMITS } from '../package/limits';
import { DerError, TAG, children, readOid, readTlv, type Tlv } from './der';

const SIGNED_DATA = '1.2.840.113549.1.7.2';

/** A PKCS#7 SignerInfo: who (issuer and serial), how (digest and signature algorithms), and what it signed. */
export type SignerInfo = {
  /** DER of the issuer Name and the serial's content bytes; null when the signer is named by key identifier. */
  issuer: Buffer | null;
  serial: Buffer | null;
  digestOid: string;
  signatureOid: string;
  /** The [0] IMPLICIT signed attributes as they are encoded, tag byte included, or null. */
  signedAttrs: Buffer | null;
  signature: Buffer;
};

export type SignedData = { contentType: string; certificates: Buffer[]; signerInfos: SignerInfo[] };

/**
 * Reads a JAR signature block (META-INF/*.RSA, *.DSA, *.EC): a ContentInfo holding SignedData, DER or BER. Throws
 * DerError when it is not one, as apksig's Asn1BerParser would fail.
 */
export function parseSignedData(der: Buffer): SignedData {
  const contentInfo = readTlv(der, 0);
  if (contentInfo.tag !== TAG.SEQUENCE) throw new DerError('ContentInfo is not a SEQUENCE');
  const [type, explicit] = children(der, contentInfo, 2);
  if (!type || !explicit || readOid(der, type) !== SIGNED_DATA || explicit.tag !== TAG.CONTEXT_0) throw new DerError('content is not SignedData');
  const signedData = readTlv(der, explicit.body, explicit.bodyEnd, 1);
  if (signedData.tag !== TAG.SEQUENCE) throw new DerError('SignedData is not a SEQUENCE');
  const fields = children(der, signedData, 8, 1);
  // version, digestAlgorithms, encapContentInfo, [0] certificates?, [1] crls?, signerInfos
  const encap = fields[2];
  if (!encap || encap.tag !== TAG.SEQUENCE) throw new DerError('SignedData has no encapContentInfo');
  const contentType = readOid(der, children(der, encap, 1, 2)[0] ?? fail('empty encapContentInfo'));
  const certSet = fields.slice(3).find((t) => t.tag === TAG.CONTEXT_0);
  const certificates = certSet ? children(der, certSet, LIMITS.certificatesPerFile + 1, 2) : [];
  if (certificates.length > LIMITS.certificatesPerFile) throw new DerError(`more than ${LIMITS.certificatesPerFile} certificates`);
  const signerSet = fields[fields.length - 1];
  if (!signerSet || signerSet.tag !== TAG.SET) throw new DerError('SignedData has no signerInfos');
  const signerInfos = children(der, signerSet, LIMITS.certificatesPerFile + 1, 2).map((t) => signerInfo(der, t));
  return { contentType, certificates: certificates.map((t) => der.subarray(t.start, t.end)), signerInfos };
}

function signerInfo(der: Buffer, t: Tlv): SignerInfo {
  if (t.tag !== TAG.SEQUENCE) throw new DerError('SignerInfo is not a SEQUENCE');
  const f = children(der, t, 8, 3);
  const [, sid, digestAlg] = f;
  if (!sid || !digestAlg) throw new DerError('SignerInfo is truncated');
  let at = 3;
  const signedAttrs = f[at]?.tag === 0xa0 ? f[at++] : null;
  const signatureAlg = f[at++];
  const signature = f[at];
  if (!signatureAlg || !signature || signature.tag !== 0x04) throw new DerError('SignerInfo has no signature');
  const byIssuer = sid.tag === TAG.SEQUENCE ? children(der, sid, 2, 4) : null;
  return {
    issuer: byIssuer?.[0] ? der.subarray(byIssuer[0].start, byIssuer[0].end) : null,
    serial: byIssuer?.[1]?.tag === TAG.INTEGER ? der.subarray(byIssuer[1].body, byIssuer[1].bodyEnd) : null,
    digestOid: algorithmOid(der, digestAlg),
    signatureOid: algorithmOid(der, signatureAlg),
    signedAttrs: signedAttrs ? der.subarray(signedAttrs.start, signedAttrs.end) : null,
    signature: der.subarray(signature.body, signature.bodyEnd),
  };
}

function algorithmOid(der: Buffer, t: Tlv): string {
  if (t.tag !== TAG.SEQUENCE) throw new DerError('AlgorithmIdentifier is not a SEQUENCE');
  return readOid(der, children(der, t, 1, 4)[0] ?? fail('empty AlgorithmIdentifier'));
}

/** The signed attributes' values by type: each attribute is SEQUENCE { type OID, SET OF values }. */
export function signedAttributeValues(attrs: Buffer): Map<string, Buffer[]> {
  const outer = readTlv(attrs, 0);
  const out = new Map<string, Buffer[]>();
  for (const a of children(attrs, outer, 64, 1)) {
    const [type, values] = children(attrs, a, 2, 2);
    if (!type || !values) throw new DerError('malformed signed attribute');
    const oid = readOid(attrs, type);
    out.set(oid, [...(out.get(oid) ?? []), ...children(attrs, values, 16, 3).map((v) => attrs.subarray(v.start, v.end))]);
  }
  return out;
}

/** The issuer Name (DER) and serial content bytes of an X.509 certificate. */
export function certificateIssuerAndSerial(cert: Buffer): { issuer: Buffer; serial: Buffer } {
  const outer = readTlv(cert, 0);
  const [tbs] = children(cert, outer, 1);
  if (!tbs) throw new DerError('certificate has no tbsCertificate');
  const f = children(cert, tbs, 4, 1);
  const i = f[0]?.tag === TAG.CONTEXT_0 ? 1 : 0; // [0] version is optional
  const serial = f[i];
  const issuer = f[i + 2];
  if (!serial || !issuer) throw new DerError('certificate is truncated');
  return { issuer: cert.subarray(issuer.start, issuer.end), serial: cert.subarray(serial.body, serial.bodyEnd) };
}

function fail(message: string): never {
  throw new DerError(message);
}
