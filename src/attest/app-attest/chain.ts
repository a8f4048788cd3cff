import type { X509Certificate } from 'node:crypto';
import type { AttestReason } from '../reasons';

/**
 * Step 1 of Apple's attestation checks (https://developer.apple.com/documentation/devicecheck/validating-apps-that-connect-to-your-server):
 * credCert is issued by the intermediate and signed with its key, the intermediate is a CA issued by a configured
 * root and signed with its key. Then every certificate, the root included, must be valid at `now`: a chain is
 * trusted or expired, never both, so expiry is only reported for a chain that links.
 */
export function chainReasons(cred: X509Certificate, intermediate: X509Certificate, roots: readonly X509Certificate[], now: Date): AttestReason[] {
  if (!intermediate.ca || !signedBy(cred, intermediate)) return ['chain_untrusted'];
  const root = roots.find((r) => signedBy(intermediate, r));
  if (!root) return ['chain_untrusted'];
  return [cred, intermediate, root].every((c) => validAt(c, now)) ? [] : ['certificate_expired'];
}

/**
 * checkIssued compares the names (and key identifiers, key usage) without cryptography, so it runs first. A key
 * Node cannot verify with (another algorithm, a broken point) is a link that does not verify.
 */
function signedBy(child: X509Certificate, parent: X509Certificate): boolean {
  try {
    return child.checkIssued(parent) && child.verify(parent.publicKey);
  } catch {
    return false;
  }
}

const validAt = (c: X509Certificate, now: Date): boolean => c.validFromDate <= now && now <= c.validToDate;
