import { comparisonOf, isSuppressed, type ComparedFinding, type ComparedScan } from './baseline';
import { gradeBelow, NOT_ANALYSED_FINDINGS, type Grade } from './grades';
import { atOrAbove, type Severity } from './severities';

export type GateName = 'fail-under' | 'fail-on-new';

export interface GateResult {
  passed: boolean;
  /** False when the scan could not analyse the package (it verified nothing). */
  analysed: boolean;
  /** Every gate that failed, each with its reason in `reason` (joined by "; "). */
  failed: GateName[];
  reason?: string;
  /** What a reader must know to trust the result (no baseline yet, or a scan that was not compared). */
  notes: string[];
}

export interface GateOptions {
  failUnder?: Grade;
  failOnNew?: Severity;
}

/**
 * The findings `--fail-on-new` fails on. Suppressed findings never count. Compared with a baseline: those the service
 * marks `new`. The first scan of a package (no baseline yet): none, as this scan becomes the baseline, so a team can
 * turn the gate on for an app with known findings on its first build and keep it on. A scan the service did not
 * compare (an older service or scan): every finding, since none is known to be old and a gate that cannot tell must
 * not pass unseen.
 */
export function newFindingsGated(scan: ComparedScan, floor: Severity): { findings: ComparedFinding[]; note?: string } {
  const candidates = scan.findings.filter((f) => !isSuppressed(f) && atOrAbove(f.severity, floor));
  switch (comparisonOf(scan)) {
    case 'baseline':
      return { findings: candidates.filter((f) => f.status === 'new') };
    case 'first':
      return {
        findings: [],
        note: `--fail-on-new: no baseline yet (the first static scan of this package): no finding counts as new, and this scan is the baseline of the next build${candidates.length ? ` (${candidates.length} unsuppressed finding(s) at or above ${floor} now)` : ''}`,
      };
    case 'none':
      return { findings: candidates, note: '--fail-on-new: the service did not compare this scan with a baseline (a service or scan older than baselines): every unsuppressed finding counts as new' };
  }
}

const names = (findings: ComparedFinding[]) => [...new Set(findings.map((f) => f.id))].join(', ');

/**
 * A scan that could not analyse its package verified nothing: it fails any gate. Otherwise each gate asked for is
 * applied and all that failed are named. The grade the service gives already leaves out suppressed findings.
 */
export function evaluateGate(scan: ComparedScan, failUnderOrOptions?: Grade | GateOptions): GateResult {
  const opts: GateOptions = typeof failUnderOrOptions === 'string' ? { failUnder: failUnderOrOptions } : (failUnderOrOptions ?? {});
  const notAnalysed = scan.findings.find((f) => (NOT_ANALYSED_FINDINGS as readonly string[]).includes(f.id));
  if (notAnalysed) return { passed: false, analysed: false, failed: [], reason: `the package could not be analysed (${notAnalysed.id})`, notes: [] };
  const failed: GateName[] = [];
  const reasons: string[] = [];
  const notes: string[] = [];
  if (opts.failUnder && gradeBelow(scan.grade, opts.failUnder)) {
    failed.push('fail-under');
    reasons.push(`grade ${scan.grade} is under ${opts.failUnder} (--fail-under)`);
  }
  if (opts.failOnNew) {
    const gated = newFindingsGated(scan, opts.failOnNew);
    if (gated.note) notes.push(gated.note);
    if (gated.findings.length) {
      failed.push('fail-on-new');
      reasons.push(`${gated.findings.length} new finding(s) at or above ${opts.failOnNew}: ${names(gated.findings)} (--fail-on-new)`);
    }
  }
  return failed.length ? { passed: false, analysed: true, failed, reason: reasons.join('; '), notes } : { passed: true, analysed: true, failed, notes };
}
