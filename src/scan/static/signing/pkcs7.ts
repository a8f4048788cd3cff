import { LimitExceededError } from '../package/errors';
import { LIMITS } from '../package/limits';
import { DerError, TAG, children, readOid, readTlv } from './der';

const SIGNED_DATA = '1.2.840.113549.1.7.2';

/**
 * Bytes of every certificate in a PKCS#7 SignedData (a JAR signature block such as META-INF/CERT.RSA), DER or BER
 * (indefinite lengths, as streaming signers write). Throws DerError when the structure is not SignedData.
 */
export function pkcs7Certificates(der: Buffer): Buffer[] {
  const contentInfo = readTlv(der, 0);
  if (contentInfo.tag !== TAG.SEQUENCE) throw new DerError('PKCS#7 ContentInfo is not a SEQUENCE');
  const [type, explicit] = children(der, contentInfo, 2);
  if (!type || !explicit || readOid(der, type) !== SIGNED_DATA || explicit.tag !== TAG.CONTEXT_0) {
    throw new DerError('PKCS#7 content is not SignedData');
  }
  const signedData = readTlv(der, explicit.body, explicit.bodyEnd, 1);
  // SignedData ::= SEQUENCE { version, digestAlgorithms, contentInfo, [0] IMPLICIT certificates OPTIONAL, ... }
  const certSet = children(der, signedData, 4, 1).find((t) => t.tag === TAG.CONTEXT_0);
  if (!certSet) return [];
  const certs = children(der, certSet, LIMITS.certificatesPerFile + 1, 2).filter((t) => t.tag === TAG.SEQUENCE);
  if (certs.length > LIMITS.certificatesPerFile) {
    throw new LimitExceededError('certificatesPerFile', `a PKCS#7 signature carries over ${LIMITS.certificatesPerFile} certificates`);
  }
  return certs.map((t) => der.subarray(t.start, t.end));
}

/** The signatureAlgorithm OID of an X.509 certificate (the algorithm its issuer signed it with). */
export function certificateSignatureOid(der: Buffer): string {
  const cert = readTlv(der, 0);
  const [, algorithm] = children(der, cert, 2);
  if (!algorithm || algorithm.tag !== TAG.SEQUENCE) throw new DerError('certificate has no signatureAlgorithm');
  const [oid] = children(der, algorithm, 1);
  if (!oid) throw new DerError('certificate signatureAlgorithm is empty');
  return readOid(der, oid);
}
