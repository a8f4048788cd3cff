/** How bad a finding is; each severity carries a fixed score penalty (see score.ts). */
export type Severity = 'low' | 'medium' | 'high' | 'critical';

/** One scan result line, shaped exactly like the API's Finding. */
export type Finding = {
  /** Stable rule id such as `android.debuggable`; clients may key on it. */
  id: string;
  severity: Severity;
  title: string;
  detail: string;
  fix: string;
};

export type Platform = 'android' | 'ios';

export const SEVERITIES: readonly Severity[] = ['low', 'medium', 'high', 'critical'];
