import type { Finding } from '../../model/types';
import { LIMITS, type LimitName } from './limits';

/** Why an analysis stopped before it could say anything: a cap of limits.ts, or the isolation around it. */
export type IncompleteCause =
  | { kind: 'limit'; limit: LimitName; message: string }
  | { kind: 'deadline'; seconds: number }
  | { kind: 'memory'; megabytes: number }
  | { kind: 'crash' };

const FIX =
  'Upload the package exactly as your build tools produced it. If it is, contact support with this scan id: a package that reaches an analysis limit cannot pass a gate until it is analysed in full.';

/**
 * The one finding of a scan that stopped early. High severity, and it makes the scan score 0 (see score.ts):
 * what was not analysed is not passed. The same package always gets the same finding, never a retry.
 */
export function incompleteFinding(cause: IncompleteCause): Finding {
  return { id: 'scan.incomplete', severity: 'high', title: 'Static analysis could not complete', detail: describe(cause), fix: FIX };
}

function describe(cause: IncompleteCause): string {
  const tail = 'This scan says nothing about the app\'s security.';
  switch (cause.kind) {
    case 'limit':
      return `The package reached the analysis limit "${cause.limit}" (${LIMITS[cause.limit]}): ${cause.message.replace(/\.+$/, '')}. ${tail}`;
    case 'deadline':
      return `Analysing the package took longer than the ${cause.seconds}-second deadline and was stopped. ${tail}`;
    case 'memory':
      return `Analysing the package needed more than the ${cause.megabytes} MB memory limit of an analysis worker and was stopped. ${tail}`;
    case 'crash':
      return `The analysis worker stopped unexpectedly while reading the package. ${tail}`;
  }
}
