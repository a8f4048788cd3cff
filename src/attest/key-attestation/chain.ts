import { X509Certificate } from 'node:crypto';
import { DER, StrictDerError, certificateParts, children, readWhole, splitCertificates, type CertificateParts, type Tlv } from '../der';
import { isAttestKey, type KeyDescription } from './key-description';

/**
 * The certificate chain of a key attestation, checked the way Android documents it
 * (https://developer.android.com/privacy-and-security/security-key-attestation, "Retrieve and verify a hardware-backed
 * key pair"): each certificate signed by the next, the last one a Google root, none expired or revoked.
 * The DER is walked by the project's strict reader (names, extensions, serials); Node's X509Certificate checks the
 * signatures and reads the dates.
 */

/** A configured root and the window in which it may anchor a chain (the built-in list's, or the certificate's own). */
export interface TrustRoot {
  cert: X509Certificate;
  notBefore: Date;
  notAfter: Date;
}

export interface ChainCertificate {
  parts: CertificateParts;
  x509: X509Certificate;
}

/**
 * Real chains have 1 to 8 certificates (ATTEST_KEY chains the most). A request's token is at most 8,192 characters
 * (6 KiB decoded); the engine's own bound is looser so that it holds for any caller.
 */
const MAX_CERTIFICATES = 10;
const MAX_BYTES = 32 * 1024;
/** A certificate nests about 8 levels deep (Certificate > TBS > [3] > Extensions > Extension ...). */
const MAX_DEPTH = 16;

/** Splits and reads the chain; throws on anything that is not strict DER certificates. */
export function readChain(chain: Buffer): ChainCertificate[] {
  if (chain.length === 0 || chain.length > MAX_BYTES) throw new StrictDerError('chain empty or too large');
  return splitCertificates(chain, MAX_CERTIFICATES).map((der) => {
    assertDerTree(der);
    return { parts: certificateParts(der), x509: new X509Certificate(der) };
  });
}

/**
 * The leaf alone, read strictly (the same bounds and DER walk as readChain), without the rest of the chain or Node's
 * X509 parser: what the engine looks at first. Null when it does not read; readChain then says why.
 */
export function readLeaf(chain: Buffer): CertificateParts | null {
  try {
    if (chain.length === 0 || chain.length > MAX_BYTES) return null;
    const [leaf] = splitCertificates(chain, MAX_CERTIFICATES);
    assertDerTree(leaf);
    return certificateParts(leaf);
  } catch {
    return null;
  }
}

/**
 * Every constructed value of the certificate, walked: definite, minimal lengths everywhere (OpenSSL, under
 * X509Certificate, accepts some BER the signature does not cover, such as the outer SEQUENCE's length), and only
 * SEQUENCE and SET constructed among universal types (DER writes strings primitive).
 */
function assertDerTree(der: Buffer): void {
  const stack: { tlv: Tlv; depth: number }[] = [{ tlv: readWhole(der, DER.SEQUENCE), depth: 0 }];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const { tlv, depth } = item;
    if ((tlv.tag & 0x20) === 0) continue;
    if ((tlv.tag & 0xc0) === 0 && tlv.tag !== DER.SEQUENCE && tlv.tag !== DER.SET) throw new StrictDerError('constructed string');
    if (depth === MAX_DEPTH) throw new StrictDerError('nested too deep');
    for (const child of children(der, tlv)) stack.push({ tlv: child, depth: depth + 1 });
  }
}

/** Signature check that answers false, never throws, for a key that cannot verify this signature at all. */
function signedBy(cert: X509Certificate, issuer: X509Certificate): boolean {
  try {
    return cert.verify(issuer.publicKey);
  } catch {
    return false;
  }
}

/**
 * The links and the KeyDescriptions' places. Each certificate names the next as its issuer (the Name's DER, byte for
 * byte), is signed by its key, and that next one is a CA or an ATTEST_KEY. X509Certificate.checkIssued() cannot be
 * used: OpenSSL wants keyCertSign in the issuer's key usage, and an ATTEST_KEY has digitalSignature only.
 * After the leaf come zero or more ATTEST_KEY attestations (https://source.android.com/docs/security/features/keystore/attestation,
 * attestation keys), then certificates without a KeyDescription: the developer page warns that only the first
 * occurrence of the extension in the chain can be trusted, and Google's own verifier refuses any other attestation
 * above the leaf, a key that signed one it should not have (the fake-leaf chain).
 * The ATTEST_KEYs attest keys of the same keystore, so they state the same security level and device state as the leaf.
 */
export function linksHold(certs: readonly ChainCertificate[], descriptions: readonly (KeyDescription | null)[]): boolean {
  for (let i = 0; i + 1 < certs.length; i++) {
    const [child, parent] = [certs[i], certs[i + 1]];
    if (!child.parts.issuer.equals(parent.parts.subject)) return false;
    if (!signedBy(child.x509, parent.x509)) return false;
    if (!parent.x509.ca && !isAttestKey(descriptions[i + 1])) return false;
  }
  const firstPlain = descriptions.findIndex((d, i) => i > 0 && d === null);
  return descriptions.every((d, i) => i === 0 || d === null || (isAttestKey(d) && (firstPlain === -1 || i < firstPlain)));
}

/**
 * The configured root the chain ends in: its last certificate must be one, byte for byte. Accepting a chain whose top
 * certificate is merely signed by a root's key would re-anchor chains of the expired Root 1 on its re-issues of 2019,
 * 2021 and 2022 (same key, same subject), and keep them trusted years after their root expired.
 */
export function anchorOf(certs: readonly ChainCertificate[], roots: readonly TrustRoot[]): TrustRoot | null {
  if (certs.length < 2) return null; // a leaf alone, or a root alone, attests nothing
  const top = certs[certs.length - 1].x509.raw;
  return roots.find((r) => r.cert.raw.equals(top)) ?? null;
}

const validAt = (from: Date, to: Date, t: Date): boolean => from.getTime() <= t.getTime() && t.getTime() <= to.getTime();

/**
 * Dates: every certificate valid now, and the root valid now and when it issued the certificate below it. KeyMint
 * leaves say notBefore 1970-01-01, so "valid at the leaf's issue" is read as the root's window holding the notBefore
 * of the certificate it signed.
 */
export function datesHold(certs: readonly ChainCertificate[], anchor: TrustRoot | null, now: Date): boolean {
  if (!certs.every((c) => validAt(c.x509.validFromDate, c.x509.validToDate, now))) return false;
  if (!anchor) return true;
  const issued = certs[certs.length - 2].x509.validFromDate;
  return validAt(anchor.notBefore, anchor.notAfter, now) && validAt(anchor.notBefore, anchor.notAfter, issued);
}
