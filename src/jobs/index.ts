import type { Deps } from '../deps';
import { JobRunner, type JobHandler, type RunnerOptions } from './job-runner';
import { giveUpScanJob, runScanJob } from './scan-job';
import { queueOwedStaticScans } from '../services/build-hooks';

export { JobRunner, backoffMs, DEFAULT_RUNNER_OPTIONS, type JobHandler, type RunnerOptions } from './job-runner';
export { staticScanId } from './scan-job';

/** The runner of static scan jobs over the process's dependencies (not started: call start()). */
export function createJobRunner(deps: Deps, options: Partial<RunnerOptions> = {}): JobRunner {
  const handler: JobHandler = { run: (job) => runScanJob(deps, job), giveUp: (job) => giveUpScanJob(deps, job), sweep: () => queueOwedStaticScans(deps) };
  return new JobRunner(deps.repos.scanJobs, handler, deps.clock, deps.logger.child({ component: 'jobs' }), options);
}
export { createPeriodicSweep, removeInBatches, type PeriodicSweep, type SweepSpec } from './periodic-sweep';
export { createAuditRetention } from './audit-retention';
