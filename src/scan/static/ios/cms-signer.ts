import { createHash, verify, X509Certificate } from 'node:crypto';
import { UnreadablePackageError } from '../package/errors';
import { cdHash, SLOT, type CodeDirectory, type EmbeddedSignature } from '../macho/code-signature';
import { children, DerError, readOid, readTlv, TAG, type Tlv } from '../signing/der';
import { pkcs7Certificates } from '../signing/pkcs7';
import { parsePlistDict } from './read-plist';

/**
 * The CMS signature of a CodeDirectory: whether it verifies, why not, the certificates it carries (signer first) and
 * the signingTime attribute (null when absent or unreadable), at which Apple's chain is checked (apple-chain.ts).
 */
export type CmsCheck = { verified: boolean; problem: string | null; certificates: Buffer[]; signingTime?: Date | null };

const DIGESTS: Record<string, string> = {
  '1.3.14.3.2.26': 'sha1',
  '2.16.840.1.101.3.4.2.1': 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512',
};
const MESSAGE_DIGEST = '1.2.840.113549.1.9.4';
const SIGNING_TIME = '1.2.840.113549.1.9.5';
/** Apple's signed attribute listing the cdhash of every CodeDirectory (a plist with `cdhashes`), so alternates are bound too. */
const APPLE_CDHASHES = '1.2.840.113635.100.9.1';
const RSA_PSS = '1.2.840.113549.1.1.10';

/**
 * Verifies the CMS SignedData of slot 0x10000 as codesign does before it looks at the chain: the messageDigest
 * attribute is the digest of the primary CodeDirectory (slot 0), the `checked` CodeDirectory (the strongest, which
 * the hashes were compared with) is the primary or listed in Apple's cdhashes attribute, and the signature over the
 * signed attributes verifies with the public key of one of the carried certificates, which is then the signer.
 * Apple's certificate chain (Apple Root CA, WWDR intermediate) is checked by the caller (apple-chain.ts), at the
 * signingTime returned here.
 */
export function checkCms(cms: Buffer, sig: EmbeddedSignature, checked: CodeDirectory): CmsCheck {
  let certificates: Buffer[] = [];
  try {
    certificates = pkcs7Certificates(cms);
    const signerInfo = firstSignerInfo(cms);
    const [, , digestAlg, maybeAttrs] = children(cms, signerInfo, 7, 3);
    const digest = DIGESTS[algorithmOid(cms, digestAlg)];
    if (!digest) return fail('CMS digest algorithm is not one codesign uses', certificates);
    const rest = children(cms, signerInfo, 7, 3);
    const hasAttrs = maybeAttrs?.tag === TAG.CONTEXT_0;
    const sigAlg = rest[hasAttrs ? 4 : 3];
    const signature = rest[hasAttrs ? 5 : 4];
    if (!sigAlg || !signature || signature.tag !== 0x04) return fail('CMS SignerInfo is incomplete', certificates);
    if (algorithmOid(cms, sigAlg) === RSA_PSS) return fail('CMS signature uses RSA-PSS, which codesign does not write', certificates);
    const primary = sig.blobs.get(SLOT.CODE_DIRECTORY);
    if (!primary) return fail('no primary CodeDirectory for the CMS signature to cover', certificates);
    let signed: Buffer;
    let signingTime: Date | null = null;
    if (hasAttrs) {
      const attrs = readAttributes(cms, maybeAttrs);
      const messageDigest = attrs.get(MESSAGE_DIGEST);
      if (!messageDigest || messageDigest.tag !== 0x04) return fail('CMS signed attributes have no messageDigest', certificates);
      if (!cms.subarray(messageDigest.body, messageDigest.bodyEnd).equals(createHash(digest).update(primary).digest())) {
        return fail('CMS messageDigest does not match the CodeDirectory', certificates);
      }
      if (checked.slot !== SLOT.CODE_DIRECTORY && !listsCdHash(cms, attrs.get(APPLE_CDHASHES), checked)) {
        return fail(`the ${checked.algorithm} CodeDirectory is not among the cdhashes the CMS signature lists`, certificates);
      }
      if (maybeAttrs.bodyEnd === maybeAttrs.end - 2) return fail('CMS signed attributes use an indefinite length', certificates);
      // The signature covers the attributes' DER with the SET OF tag in place of the [0] IMPLICIT tag.
      signed = Buffer.from(cms.subarray(maybeAttrs.start, maybeAttrs.end));
      signed[0] = TAG.SET;
      signingTime = readTime(cms, attrs.get(SIGNING_TIME));
    } else {
      signed = primary;
    }
    const value = cms.subarray(signature.body, signature.bodyEnd);
    const signer = certificates.findIndex((der) => verifiesWith(der, digest, signed, value));
    if (signer < 0) return fail('CMS signature does not verify with any certificate it carries', certificates);
    return { verified: true, problem: null, certificates: [certificates[signer], ...certificates.filter((_, k) => k !== signer)], signingTime };
  } catch (err) {
    // RangeError: a read past a buffer's end that a bounds check missed is still a malformed signature, not a crash.
    if (err instanceof DerError || err instanceof RangeError) return fail(`CMS signature unreadable (${err.message})`, certificates);
    throw err;
  }
}

function fail(problem: string, certificates: Buffer[]): CmsCheck {
  return { verified: false, problem, certificates };
}

/** The OID of an AlgorithmIdentifier SEQUENCE. */
function algorithmOid(cms: Buffer, algorithm: Tlv | undefined): string {
  const oid = algorithm?.tag === TAG.SEQUENCE ? children(cms, algorithm, 1, 4)[0] : undefined;
  if (!oid) throw new DerError('CMS AlgorithmIdentifier is missing');
  return readOid(cms, oid);
}

function firstSignerInfo(cms: Buffer): Tlv {
  const contentInfo = readTlv(cms, 0);
  const [, explicit] = children(cms, contentInfo, 2);
  if (!explicit) throw new DerError('CMS ContentInfo has no content');
  const signedData = readTlv(cms, explicit.body, explicit.bodyEnd, 1);
  const parts = children(cms, signedData, 6, 1);
  const signerInfos = parts.slice(3).reverse().find((t) => t.tag === TAG.SET);
  const first = signerInfos && children(cms, signerInfos, 1, 2)[0];
  if (!first || first.tag !== TAG.SEQUENCE) throw new DerError('CMS SignedData has no SignerInfo');
  return first;
}

/** Signed attributes by OID: the first value of each. */
function readAttributes(cms: Buffer, attrs: Tlv): Map<string, Tlv> {
  const out = new Map<string, Tlv>();
  for (const attr of children(cms, attrs, 32, 4)) {
    const [oid, values] = children(cms, attr, 2, 5);
    if (!oid || !values) throw new DerError('CMS attribute is incomplete');
    const [first] = children(cms, values, 1, 6);
    if (first) out.set(readOid(cms, oid), first);
  }
  return out;
}

/** A UTCTime (YYMMDDHHMMSSZ, years 1950 to 2049) or GeneralizedTime (YYYYMMDDHHMMSSZ), as RFC 5652 writes signingTime. */
function readTime(cms: Buffer, t: Tlv | undefined): Date | null {
  if (!t || (t.tag !== 0x17 && t.tag !== 0x18)) return null;
  const text = cms.toString('latin1', t.body, Math.min(t.bodyEnd, t.body + 32));
  const m = (t.tag === 0x17 ? /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/ : /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/).exec(text);
  if (!m) return null;
  const year = t.tag === 0x17 ? (Number(m[1]) < 50 ? 2000 : 1900) + Number(m[1]) : Number(m[1]);
  const [month, day, hour, minute, second] = m.slice(2).map(Number);
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  // Date.UTC rolls an impossible date (month 13, day 32) over: such a time is unreadable, not another day.
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day && hour < 24 && minute < 60 && second < 60 ? date : null;
}

function listsCdHash(cms: Buffer, attr: Tlv | undefined, cd: CodeDirectory): boolean {
  if (!attr || attr.tag !== 0x04) return false;
  let listed: unknown;
  try {
    listed = parsePlistDict(cms.subarray(attr.body, attr.bodyEnd), 'cdhashes attribute').cdhashes;
  } catch (err) {
    if (err instanceof UnreadablePackageError) return false;
    throw err;
  }
  const own = cdHash({ algorithm: cd.algorithm, hashSize: 20 }, cd.blob);
  return Array.isArray(listed) && listed.some((h) => Buffer.isBuffer(h) && h.equals(own));
}

function verifiesWith(der: Buffer, digest: string, data: Buffer, signature: Buffer): boolean {
  try {
    return verify(digest, data, new X509Certificate(der).publicKey, signature);
  } catch {
    return false;
  }
}

/** The signer as the API shows it: lowercase hex SHA-256 of the DER, subject, notAfter (ISO 8601). */
export function describeCertificate(der: Buffer): { sha256: string; subject: string; notAfter: string } | null {
  try {
    const cert = new X509Certificate(der);
    const notAfter = new Date(cert.validTo);
    return {
      sha256: createHash('sha256').update(der).digest('hex'),
      subject: cert.subject.replace(/\n/g, ', '),
      notAfter: Number.isNaN(notAfter.getTime()) ? cert.validTo : notAfter.toISOString(),
    };
  } catch {
    return null;
  }
}

/** Apple puts the Team ID in the signing certificate's OU. */
export function certificateTeamId(der: Buffer): string | null {
  try {
    const ou = new X509Certificate(der).subject.split('\n').find((line) => line.startsWith('OU='));
    return ou ? ou.slice(3) : null;
  } catch {
    return null;
  }
}
