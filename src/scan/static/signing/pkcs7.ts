import { DerError, TAG, children, readOid, readTlv } from './der';

const SIGNED_DATA = '1.2.840.113549.1.7.2';

/**
 * DER bytes of every certificate in a PKCS#7 SignedData (a JAR signature block such as META-INF/CERT.RSA).
 * Throws DerError when the structure is not SignedData.
 */
export function pkcs7Certificates(der: Buffer): Buffer[] {
  const contentInfo = readTlv(der, 0);
  if (contentInfo.tag !== TAG.SEQUENCE) throw new DerError('PKCS#7 ContentInfo is not a SEQUENCE');
  const [type, explicit] = children(der, contentInfo);
  if (!type || !explicit || readOid(der, type) !== SIGNED_DATA || explicit.tag !== TAG.CONTEXT_0) {
    throw new DerError('PKCS#7 content is not SignedData');
  }
  const signedData = readTlv(der, explicit.body, explicit.end);
  // SignedData ::= SEQUENCE { version, digestAlgorithms, contentInfo, [0] IMPLICIT certificates OPTIONAL, ... }
  const certSet = children(der, signedData).find((t) => t.tag === TAG.CONTEXT_0);
  if (!certSet) return [];
  return children(der, certSet).filter((t) => t.tag === TAG.SEQUENCE).map((t) => der.subarray(t.start, t.end));
}

/** The signatureAlgorithm OID of an X.509 certificate (the algorithm its issuer signed it with). */
export function certificateSignatureOid(der: Buffer): string {
  const cert = readTlv(der, 0);
  const [, algorithm] = children(der, cert);
  if (!algorithm || algorithm.tag !== TAG.SEQUENCE) throw new DerError('certificate has no signatureAlgorithm');
  return readOid(der, children(der, algorithm)[0]);
}
