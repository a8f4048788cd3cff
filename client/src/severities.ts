/** The service's finding severities, least serious first: `--fail-on-new` gates on one and everything above it. */
export const SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

export function isSeverity(value: string): value is Severity {
  return (SEVERITIES as readonly string[]).includes(value);
}

/** True when `severity` is `floor` or more serious. */
export function atOrAbove(severity: string, floor: Severity): boolean {
  return SEVERITIES.indexOf(severity as Severity) >= SEVERITIES.indexOf(floor);
}
