import type { Deps } from '../deps';
import { JobRunner, type JobHandler, type RunnerOptions } from './job-runner';
import { giveUpScanJob, runScanJob, scanWorkersFor } from './scan-job';
import type { ScanWorkers } from '../scan/worker';
import { queueOwedStaticScans } from '../services/build-hooks';

export { JobRunner, backoffMs, DEFAULT_RUNNER_OPTIONS, type JobHandler, type RunnerOptions } from './job-runner';
export { staticScanId } from './scan-job';

/**
 * The runner of static scan jobs over the process's dependencies (not started: call start()). Analyses run in the
 * process's analysis workers, configured by SCAN_WORKERS, SCAN_WORKER_MEMORY_MB and SCAN_DEADLINE_S.
 */
export function createJobRunner(deps: Deps, options: Partial<RunnerOptions> = {}, workers: ScanWorkers = scanWorkersFor(deps.config)): JobRunner {
  const handler: JobHandler = { run: (job) => runScanJob(deps, job, workers), giveUp: (job) => giveUpScanJob(deps, job), sweep: () => queueOwedStaticScans(deps) };
  return new JobRunner(deps.repos.scanJobs, handler, deps.clock, deps.logger.child({ component: 'jobs' }), { concurrency: deps.config.scanIsolation.workers, ...options });
}
export { createPeriodicSweep, removeInBatches, type PeriodicSweep, type SweepSpec } from './periodic-sweep';
export { createAuditRetention } from './audit-retention';
