/**
 * Who signed the scanned package, as the service reports it (Scan.signing): one line for the log and the job summary,
 * and the properties SARIF carries. A server older than `signing` sends none: nothing is said then. The subject is
 * certificate text the package chose, so callers escape it like any package text.
 */
import type { Scan } from './api';

type Signing = NonNullable<Scan['signing']>;

export interface SignerFacts {
  verified: boolean;
  /** The (first) signer's certificate SHA-256, lowercase hex; null when the package names none. */
  sha256: string | null;
  subject: string | null;
  /** Android: the schemes that verified. */
  schemes?: string[];
  /** iOS: the team of the signing certificate. */
  teamId?: string | null;
}

export function signerFacts(scan: Pick<Scan, 'signing'>): SignerFacts | null {
  const signing: Signing | null | undefined = scan.signing;
  if (!signing) return null;
  const first = signing.signers[0];
  const facts: SignerFacts = { verified: signing.verified, sha256: first?.sha256 ?? null, subject: first?.subject ?? null };
  if ('schemes' in signing) facts.schemes = signing.schemes;
  else facts.teamId = signing.teamId;
  return facts;
}

/** A digest shortened for reading: 16 hex digits (64 bits) and an ellipsis. */
export const shortSha = (sha256: string) => `${sha256.slice(0, 16)}…`;

/** What identifies the signature besides the certificate: its schemes (Android) or team (iOS). */
export function signerScope(facts: SignerFacts): string {
  if (facts.schemes) return facts.schemes.length ? `schemes ${facts.schemes.join(', ')}` : 'no scheme verified';
  return facts.teamId ? `team ${facts.teamId}` : 'no team';
}
