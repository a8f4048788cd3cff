import type { Deps } from '../core/deps';
import { JobRunner, type JobHandler, type RunnerOptions } from './job-runner';
import { giveUpScanJob, runScanJob } from './scan-job';
import type { ScanWorkers } from '../scan/worker/analyze-in-worker';
import { queueOwedStaticScans } from '../services/build-hooks';
import { operatorContext } from '../services/operator-context';
import { removeStaleCopies } from './artifact-file';

export { JobRunner, backoffMs, DEFAULT_RUNNER_OPTIONS, type JobHandler, type RunnerOptions } from './job-runner';
export { staticScanId } from './scan-job';

/**
 * The runner of static scan jobs over the process's dependencies (not started: call start()). Analyses run in the
 * process's analysis workers, configured by SCAN_WORKERS, SCAN_WORKER_MEMORY_MB and SCAN_DEADLINE_S.
 */
export function createJobRunner(deps: Deps, options: Partial<RunnerOptions> = {}, workers: ScanWorkers = deps.instance.scanWorkers): JobRunner {
  // Package copies of scans a crash interrupted go with the sweep, each minute (an analysis ends within its
  // deadline; 10 minutes more for the copy), so a process restarted at once still removes its predecessor's.
  const staleCopiesAfterMs = deps.config.scanIsolation.deadlineMs + 10 * 60_000;
  const sweep = async () => {
    const removed = await removeStaleCopies(staleCopiesAfterMs).catch(() => 0);
    if (removed > 0) deps.logger.warn({ removed }, 'removed package copies of interrupted scans');
    return queueOwedStaticScans(operatorContext(deps, null));
  };
  const handler: JobHandler = { run: (job, stopping, released) => runScanJob(deps, job, workers, stopping, released), giveUp: (job) => giveUpScanJob(deps, job), sweep };
  return new JobRunner(deps.repos.scanJobs, handler, deps.clock, deps.logger.child({ component: 'jobs' }), { concurrency: deps.config.scanIsolation.workers, readyAhead: 1, leaseMs: deps.config.scanJobLeaseMs, ...options });
}
export { createPeriodicSweep, removeInBatches, type PeriodicSweep, type SweepSpec } from './periodic-sweep';
export { createAuditRetention } from './audit-retention';
