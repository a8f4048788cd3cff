import type { Finding, FindingRef, ScanFinding } from './model/types';
import { fingerprintOf } from './fingerprint';
import { SuppressionIndex, type ActiveSuppression } from './suppress';

/**
 * At most this many fixed or come-back findings are listed per scan. A baseline holds at most the analyser's cap of
 * findings (LIMITS.findings, 100) plus the continuity findings, so this only bounds a document written by an older
 * version with other caps; the counts in `diff` stay exact.
 */
export const MAX_LISTED_REFS = 500;

export type Comparison = {
  findings: ScanFinding[];
  diff: { new: number; existing: number; fixed: number };
  fixedFindings: FindingRef[];
  unsuppressed: FindingRef[];
};

const ref = (f: BaselineFinding & { fingerprint: string }): FindingRef => ({ id: f.id, fingerprint: f.fingerprint, title: f.title });

/**
 * Fingerprints the findings of a scan of `pkg`, marks each `new` or `existing` against the baseline's findings (null:
 * no baseline, every finding is new), and applies the app's unexpired suppressions. Fixed: the baseline's
 * fingerprints absent now. Unsuppressed: findings the baseline listed as suppressed that no suppression accepts now.
 * Linear in both lists.
 */
type BaselineFinding = Pick<ScanFinding, 'id' | 'title' | 'fingerprint' | 'suppressed'>;

export function compareWithBaseline(findings: readonly Finding[], pkg: string, baseline: { findings: readonly BaselineFinding[] } | null, suppressions: readonly ActiveSuppression[]): Comparison {
  const before = new Map<string, BaselineFinding>();
  for (const f of baseline?.findings ?? []) if (f.fingerprint) before.set(f.fingerprint, f);
  const index = new SuppressionIndex(suppressions);
  const seen = new Set<string>();
  const unsuppressed: FindingRef[] = [];
  let existing = 0;
  const out = findings.map((finding): ScanFinding => {
    const fingerprint = fingerprintOf(finding, pkg);
    seen.add(fingerprint);
    const was = before.get(fingerprint);
    if (was) existing++;
    const suppressed = index.match(finding, fingerprint);
    const stored: ScanFinding & { fingerprint: string } = { ...finding, fingerprint, status: was ? 'existing' : 'new', suppressed };
    if (was?.suppressed && !suppressed && unsuppressed.length < MAX_LISTED_REFS) unsuppressed.push(ref(stored));
    return stored;
  });
  const fixed = [...before.values()].filter((f): f is BaselineFinding & { fingerprint: string } => !seen.has(f.fingerprint as string));
  return {
    findings: out,
    diff: { new: out.length - existing, existing, fixed: fixed.length },
    fixedFindings: fixed.slice(0, MAX_LISTED_REFS).map(ref),
    unsuppressed,
  };
}
