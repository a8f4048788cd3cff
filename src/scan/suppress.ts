import type { Finding, FindingSuppression } from './model/types';
import { UNANALYSED_FINDING_IDS } from './score';

/**
 * Findings no suppression applies to: the critical signature findings (a package signed by someone else, or whose
 * seal is broken, is never a known risk) and the findings that say the package was not analysed (accepting one would
 * let a gate pass a package nobody read).
 */
export const UNSUPPRESSIBLE_FINDING_IDS: ReadonlySet<string> = new Set([
  'android.signature-invalid',
  'android.signer-changed',
  'ios.seal-broken',
  'ios.signer-untrusted',
  'ios.team-changed',
  ...UNANALYSED_FINDING_IDS,
]);

/** A suppression as a scan applies it: unexpired at the scan's time (the caller reads only those). */
export type ActiveSuppression = { id: string; findingId: string; fingerprint: string | null; reason: string; expiresAt: Date };

/**
 * Index of an app's suppressions: by rule id and fingerprint together, and by rule id for those that accept every
 * instance. A fingerprint alone never matches: a suppression recorded for one rule with the fingerprint of another
 * rule's finding accepts nothing (it would hide a finding its audit entry does not name).
 */
export class SuppressionIndex {
  private readonly byInstance = new Map<string, ActiveSuppression>();
  private readonly byRule = new Map<string, ActiveSuppression>();
  constructor(suppressions: readonly ActiveSuppression[]) {
    for (const s of suppressions) {
      if (s.fingerprint) this.byInstance.set(instanceKey(s.findingId, s.fingerprint), s);
      else this.byRule.set(s.findingId, s);
    }
  }
  /** The suppression that accepts this finding: its own instance's first, else its rule's; null when none or never. */
  match(finding: Pick<Finding, 'id'>, fingerprint: string): FindingSuppression | null {
    if (UNSUPPRESSIBLE_FINDING_IDS.has(finding.id)) return null;
    const s = this.byInstance.get(instanceKey(finding.id, fingerprint)) ?? this.byRule.get(finding.id);
    return s ? { id: s.id, reason: s.reason, expiresAt: s.expiresAt } : null;
  }
}

// Rule ids hold no newline (suppressions-service checks them), so the key is unambiguous.
const instanceKey = (findingId: string, fingerprint: string) => `${findingId}\n${fingerprint}`;
