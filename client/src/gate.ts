import type { Scan } from './api';
import { gradeBelow, NOT_ANALYSED_FINDINGS, type Grade } from './grades';

export interface GateResult {
  passed: boolean;
  /** False when the scan could not analyse the package (it verified nothing). */
  analysed: boolean;
  reason?: string;
}

/** A scan that could not analyse its package verified nothing: it fails any gate. */
export function evaluateGate(scan: Scan, failUnder: Grade | undefined): GateResult {
  const notAnalysed = scan.findings.find((f) => (NOT_ANALYSED_FINDINGS as readonly string[]).includes(f.id));
  if (notAnalysed) return { passed: false, analysed: false, reason: `the package could not be analysed (${notAnalysed.id})` };
  if (failUnder && gradeBelow(scan.grade, failUnder)) return { passed: false, analysed: true, reason: `grade ${scan.grade} is under ${failUnder}` };
  return { passed: true, analysed: true };
}
