import { createHash, X509Certificate } from 'node:crypto';
import { APPLE_ROOTS, APPLE_WWDR_INTERMEDIATES } from './apple-roots';
import { certificateTeamId } from './cms-signer';

/**
 * The certificate authorities a signing certificate must chain to: the intermediates that may issue it, each with
 * the root that issued it (checked when the anchors are made, so a signer's chain is two links to check).
 */
export type TrustAnchors = { intermediates: ReadonlyArray<{ cert: X509Certificate; root: X509Certificate }> };

/**
 * What the chain of a CMS signer proves. Trusted: Apple issued the certificate to `teamId` (its OU; Apple writes
 * the Team ID there and issues an OU only to its team), and `keySha256` (SHA-256 of its SubjectPublicKeyInfo DER,
 * lowercase hex) is the key signing continuity pins. Untrusted: why not, in words for the finding.
 */
export type ChainVerdict = { trusted: true; teamId: string | null; keySha256: string } | { trusted: false; reason: string };

/** When the chain is checked: the CMS signingTime attribute when the signature has one, and the scan's time. */
export type ChainTimes = { signedAt: Date | null; now: Date };

/** Extended key usage of code signing: Apple Development and Apple Distribution certificates carry it (critical). */
const CODE_SIGNING = '1.3.6.1.5.5.7.3.3';

/** Anchors from PEM certificates: an intermediate is kept only when a given root issued it and is a CA. */
export function trustAnchors(rootPems: readonly string[], intermediatePems: readonly string[]): TrustAnchors {
  const roots = rootPems.map((pem) => new X509Certificate(pem)).filter((r) => r.ca && r.checkIssued(r) && signedBy(r, r));
  const intermediates = intermediatePems.map((pem) => new X509Certificate(pem)).flatMap((cert) => {
    const root = cert.ca ? roots.find((r) => cert.checkIssued(r) && signedBy(cert, r)) : undefined;
    return root ? [{ cert, root }] : [];
  });
  return { intermediates };
}

let apple: TrustAnchors | null = null;

/** Apple's roots and WWDR intermediates (apple-roots.ts), parsed and checked once per process. */
export function appleAnchors(): TrustAnchors {
  apple ??= trustAnchors(APPLE_ROOTS.map((c) => c.pem), APPLE_WWDR_INTERMEDIATES.map((c) => c.pem));
  return apple;
}

/**
 * Checks that the signer's certificate was issued by one of the anchors' intermediates, offline, as
 * `anchor apple generic` requires of an iOS signature: the leaf's issuer name and key identifier match the
 * intermediate's and its signature verifies with the intermediate's key (whose own link to its root was checked
 * when the anchors were made); the intermediate is a CA; the leaf is a code signing certificate. Certificates
 * the CMS carries besides the signer are never used: only the bundled intermediates may link a leaf to a root.
 *
 * Time (docs/scan-evidence.md, "The iOS seal"): the leaf, its intermediate and the root must all be valid at the
 * signature's signingTime (else at the scan's time), and the leaf also at the scan's time. The signingTime is the
 * signer's own claim, not a timestamp authority's, so it cannot keep an expired certificate alive: a leaf expired
 * by the time of the scan is not trusted, though codesign would accept it with a secure timestamp.
 */
export function checkSignerChain(leafDer: Buffer, times: ChainTimes, anchors: TrustAnchors = appleAnchors()): ChainVerdict {
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(leafDer);
  } catch {
    return untrusted('the signing certificate cannot be read');
  }
  const link = anchors.intermediates.find(({ cert }) => leaf.checkIssued(cert) && signedBy(leaf, cert));
  if (!link) {
    return untrusted(leaf.checkIssued(leaf) && signedBy(leaf, leaf)
      ? 'it is self-signed, not issued by Apple'
      : 'it is not issued by an Apple Worldwide Developer Relations CA');
  }
  if (leaf.ca) return untrusted('it is a CA certificate, not a signing certificate');
  if (!(leaf.keyUsage ?? []).includes(CODE_SIGNING)) return untrusted('it is not a code signing certificate (no code signing extended key usage)');
  const at = times.signedAt ?? times.now;
  const when = times.signedAt ? `at its signing time, ${iso(at)}` : `at the scan's time, ${iso(at)}`;
  for (const [what, cert] of [['the signing certificate', leaf], ['its Apple intermediate', link.cert], ['Apple\'s root', link.root]] as const) {
    if (!validAt(cert, at)) return untrusted(`${what} was not valid ${when}`);
  }
  if (!validAt(leaf, times.now)) return untrusted(`the signing certificate is not valid at the scan's time, ${iso(times.now)} (valid ${iso(new Date(leaf.validFrom))} to ${iso(new Date(leaf.validTo))})`);
  const keySha256 = createHash('sha256').update(leaf.publicKey.export({ type: 'spki', format: 'der' })).digest('hex');
  return { trusted: true, teamId: certificateTeamId(leafDer), keySha256 };
}

function untrusted(reason: string): ChainVerdict {
  return { trusted: false, reason };
}

/** Whether `cert`'s signature verifies with `issuer`'s public key (false, never a throw, for an unusable key). */
function signedBy(cert: X509Certificate, issuer: X509Certificate): boolean {
  try {
    return cert.verify(issuer.publicKey);
  } catch {
    return false;
  }
}

function validAt(cert: X509Certificate, at: Date): boolean {
  const from = new Date(cert.validFrom).getTime();
  const to = new Date(cert.validTo).getTime();
  // An unparseable date is no validity at all.
  return from <= at.getTime() && at.getTime() <= to;
}

const iso = (d: Date) => (Number.isNaN(d.getTime()) ? 'an unreadable date' : d.toISOString().replace(/\.000Z$/, 'Z'));
