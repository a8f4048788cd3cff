/**
 * What the service says about a static scan against its baseline (the latest earlier static scan of the same app,
 * platform and package): each finding `new` or `existing`, the baseline's findings that are gone (fixed), those whose
 * suppression expired since (came back), and the suppressed ones with who-accepted-why-until-when. A service older
 * than baselines sends none of these fields, and a scan made before them has them null: such a scan was not compared.
 */
import type { Finding, Scan } from './api';

export interface FindingSuppression {
  id: string;
  reason: string;
  expiresAt: string;
}

/** A finding of the baseline named by the scan (fixed, or back after its suppression expired). */
export interface FindingRef {
  id: string;
  fingerprint: string;
  title: string;
}

export type ComparedFinding = Finding & {
  fingerprint?: string | null;
  status?: 'new' | 'existing' | null;
  suppressed?: FindingSuppression | null;
};

export type ComparedScan = Omit<Scan, 'findings'> & {
  findings: ComparedFinding[];
  baseline?: { scanId: string; buildId: string } | null;
  diff?: { new: number; existing: number; fixed: number } | null;
  fixedFindings?: FindingRef[] | null;
  unsuppressed?: FindingRef[] | null;
};

/**
 * `baseline`: compared with an earlier scan. `first`: the service compares, but this is the first static scan of the
 * package, so it becomes the baseline of the next. `none`: not compared at all (an older service, or a scan made
 * before baselines existed), so nothing is known to be existing.
 */
export type Comparison = 'baseline' | 'first' | 'none';

export function comparisonOf(scan: ComparedScan): Comparison {
  if (scan.baseline && scan.diff) return 'baseline';
  if (scan.baseline !== null) return 'none'; // absent: a service older than baselines
  // No baseline: a comparing service still counts the findings (all new) and fingerprints each; a scan stored before
  // fingerprints has neither.
  const fingerprinted = scan.findings.length > 0 && scan.findings.every((f) => typeof f.fingerprint === 'string');
  return scan.diff || fingerprinted ? 'first' : 'none';
}

export const isSuppressed = (f: ComparedFinding): boolean => Boolean(f.suppressed);

/** The findings a person reads, in the order they matter to a build. Each finding is in exactly one list. */
export interface FindingSections {
  comparison: Comparison;
  baseline: { scanId: string; buildId: string } | null;
  /** Not in the baseline and not suppressed (empty unless compared with a baseline). */
  new: ComparedFinding[];
  /** In the baseline, gone now. */
  fixed: FindingRef[];
  /** Their suppression expired since the baseline: counted again. */
  cameBack: ComparedFinding[];
  /** Everything else that is not suppressed (all of them when the scan was not compared with a baseline). */
  existing: ComparedFinding[];
  suppressed: ComparedFinding[];
}

export function findingSections(scan: ComparedScan): FindingSections {
  const comparison = comparisonOf(scan);
  const back = new Set((scan.unsuppressed ?? []).map((ref) => ref.fingerprint));
  const sections: FindingSections = { comparison, baseline: scan.baseline ?? null, new: [], fixed: scan.fixedFindings ?? [], cameBack: [], existing: [], suppressed: [] };
  for (const f of scan.findings) {
    if (isSuppressed(f)) sections.suppressed.push(f);
    else if (comparison === 'baseline' && f.status === 'new') sections.new.push(f);
    else if (f.fingerprint && back.has(f.fingerprint)) sections.cameBack.push(f);
    else sections.existing.push(f);
  }
  return sections;
}
