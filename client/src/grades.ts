/** The service's grades, best first (score bands of the service, `A+` to `F`). */
export const GRADES = ['A+', 'A', 'A-', 'B+', 'B', 'B-', 'C+', 'C', 'C-', 'D+', 'D', 'D-', 'F'] as const;
export type Grade = (typeof GRADES)[number];

export function isGrade(value: string): value is Grade {
  return (GRADES as readonly string[]).includes(value);
}

/** True when `grade` is worse than `floor`. */
export function gradeBelow(grade: string, floor: Grade): boolean {
  const rank = GRADES.indexOf(grade as Grade);
  return rank === -1 || rank > GRADES.indexOf(floor);
}

/** Findings of a static scan that mean nothing was verified: such a scan never passes a gate. */
export const NOT_ANALYSED_FINDINGS = ['package.unreadable', 'package.wrong-platform', 'scan.incomplete'] as const;
