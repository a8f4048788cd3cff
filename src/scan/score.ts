import type { Finding, Severity } from './model/types';

/**
 * Points taken from 100 for each finding of a severity.
 * Every penalty is positive and the score is a plain sum, so adding a finding
 * can only lower the score (or leave it at the floor of 0): the scoring is monotonic.
 *
 * | severity | penalty |
 * |----------|---------|
 * | critical | 40      |
 * | high     | 20      |
 * | medium   | 8       |
 * | low      | 3       |
 */
export const SEVERITY_PENALTIES: Readonly<Record<Severity, number>> = Object.freeze({
  critical: 40,
  high: 20,
  medium: 8,
  low: 3,
});

/**
 * Grade bands, best first: a score gets the first grade whose minimum it reaches.
 * A single critical finding (score 60) can never earn better than C-; a clean package is A+.
 */
export const GRADE_BANDS: ReadonlyArray<{ grade: string; min: number }> = Object.freeze([
  { grade: 'A+', min: 100 },
  { grade: 'A', min: 93 },
  { grade: 'A-', min: 90 },
  { grade: 'B+', min: 87 },
  { grade: 'B', min: 83 },
  { grade: 'B-', min: 80 },
  { grade: 'C+', min: 77 },
  { grade: 'C', min: 70 },
  { grade: 'C-', min: 60 },
  { grade: 'D+', min: 55 },
  { grade: 'D', min: 45 },
  { grade: 'D-', min: 35 },
  { grade: 'F', min: 0 },
]);

/**
 * Findings that say the package was not analysed (unreadable, wrong platform, analysis stopped at a limit or by its
 * worker's deadline or memory cap, or never completed). Nothing verified, nothing passed: a scan holding one scores 0
 * and grades F, so no gate passes a package the analyser could not read. This only ever lowers a score, so the
 * scoring stays monotonic.
 */
export const UNANALYSED_FINDING_IDS: ReadonlySet<string> = new Set(['package.unreadable', 'package.wrong-platform', 'scan.incomplete']);

type Scored = Pick<Finding, 'severity'> & { id?: string; suppressed?: unknown };

/**
 * 100 minus the sum of penalties, floored at 0; 0 when a finding says the package was not analysed. A suppressed
 * finding (accepted by the app until a date) costs nothing; removing a penalty only raises the score, and a finding
 * that is not suppressed still only lowers it, so the scoring stays monotonic in unsuppressed findings.
 */
export function scoreFindings(findings: readonly Scored[]): number {
  if (findings.some((f) => f.id !== undefined && UNANALYSED_FINDING_IDS.has(f.id))) return 0;
  const penalty = findings.reduce((sum, f) => sum + (f.suppressed ? 0 : SEVERITY_PENALTIES[f.severity]), 0);
  return Math.max(0, 100 - penalty);
}

/** Grade of a score in 0..100; out-of-range input is clamped rather than rejected. */
export function gradeForScore(score: number): string {
  const clamped = Math.min(100, Math.max(0, score));
  const band = GRADE_BANDS.find((b) => clamped >= b.min);
  return band ? band.grade : 'F';
}

export function scoreAndGrade(findings: readonly Scored[]): { score: number; grade: string } {
  const score = scoreFindings(findings);
  return { score, grade: gradeForScore(score) };
}
