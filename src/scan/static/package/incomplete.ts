import type { Finding } from '../../model/types';
import { LIMITS, type LimitName } from './limits';

/**
 * Why an analysis stopped before it could say anything: a cap of limits.ts or the isolation around it (a verdict on
 * the package, the same every time), or the job that runs it giving up (`interrupted`: the process the analysis ran
 * in ended twice; `attempts`: the service's own faults, storage say, outlasted every attempt).
 */
export type IncompleteCause =
  | { kind: 'limit'; limit: LimitName; message: string }
  | { kind: 'deadline'; seconds: number }
  | { kind: 'memory'; megabytes: number }
  | { kind: 'crash' }
  | { kind: 'interrupted' }
  | { kind: 'attempts'; attempts: number };

const FIX =
  'Upload the package exactly as your build tools produced it. If it is, contact support with this scan id: a package that reaches an analysis limit cannot pass a gate until it is analysed in full.';
const TAIL = 'This scan says nothing about the app\'s security.';

/**
 * The one finding of a scan that stopped early, the only place `scan.incomplete` is written. High severity, and it
 * makes the scan score 0 (see score.ts): what was not analysed is not passed.
 */
export function incompleteFinding(cause: IncompleteCause): Finding {
  return { id: 'scan.incomplete', severity: 'high', title: 'Static analysis could not complete', detail: describe(cause), fix: fixOf(cause) };
}

function describe(cause: IncompleteCause): string {
  switch (cause.kind) {
    case 'limit':
      return `The package reached the analysis limit "${cause.limit}" (${LIMITS[cause.limit]}): ${cause.message.replace(/\.+$/, '')}. ${TAIL}`;
    case 'deadline':
      return `Analysing the package took longer than the ${cause.seconds}-second deadline and was stopped. ${TAIL}`;
    case 'memory':
      return `Analysing the package needed more than the ${cause.megabytes} MB memory limit of an analysis worker and was stopped. ${TAIL}`;
    case 'crash':
      return `The analysis worker stopped unexpectedly while reading the package. ${TAIL}`;
    case 'interrupted':
      return `The analysis of the uploaded package stopped the analysing process more than once, so it was not tried again. A package built by the usual tools never does this. ${TAIL}`;
    case 'attempts':
      // The cause (a storage outage, a corrupted stored object) stays in the job's lastError: it is internal detail.
      return `The uploaded package could not be analysed after ${cause.attempts} attempts (it could not be read back from artifact storage, or the analysis was interrupted each time). ${TAIL}`;
  }
}

function fixOf(cause: IncompleteCause): string {
  switch (cause.kind) {
    case 'interrupted':
      return 'Check that the uploaded file is the package your build produced (for example with `unzip -l`), then register the build again and upload it; if this scan repeats, contact support with this scan id.';
    case 'attempts':
      return 'Register the build again and upload the same package to its new upload URL; if this scan repeats, contact support with this scan id.';
    default:
      return FIX;
  }
}
