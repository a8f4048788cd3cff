/** Problems of a seal, each naming a file of the bundle; `total` counts them all, `problems` keeps the first ones. */
export type SealReport = { problems: string[]; total: number };

/** Problems kept for the finding: it names a few, and counts the rest. */
const KEPT_PROBLEMS = 20;

export function newReport(): SealReport {
  return { problems: [], total: 0 };
}

export function addProblem(report: SealReport, problem: string): void {
  report.total++;
  if (report.problems.length < KEPT_PROBLEMS) report.problems.push(problem);
}
