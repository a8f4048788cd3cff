import type { Deps } from '../core/deps';
import type { PendingScan, ScanJobDoc } from '../data/scan-jobs-repo';
import type { BuildDoc } from '../data/builds-repo';
import type { StaticAnalysis } from '../scan/static/analyze-package';
import { AnalysisNotStarted, type ScanWorkers } from '../scan/worker/analyze-in-worker';
import { copyArtifactToTemp } from './artifact-file';
import { MAX_INTERRUPTED_ANALYSES, countedAttempts } from './job-runner';
import { scanToWaitFor } from '../services/scan-baseline';
import { operatorContext } from '../services/operator-context';
import { completeStaticScan, isComparable, pendingStaticScan, recordWrittenStaticScan, writeIncompleteStaticScan } from '../services/static-scans';

/**
 * While an earlier-registered release build of the package still has its static scan to make, a finished analysis goes
 * back to the queue with its analysis kept (not counted as an attempt). The earlier job wakes it when it ends
 * (JobRunner: wakeWaiters); this is how long it waits at most before looking again, should that wake be lost to a crash.
 */
export const DEFER_MS = 5_000;
/**
 * Bound of the waiting: the earlier job always ends (its last attempt writes a scan), at worst after its 5 attempts,
 * leases and back-offs (about 50 minutes); past 2 hours of waiting the scan is compared with what exists.
 */
export const MAX_DEFERRALS = 1_440;

/**
 * The id of the static scan a job makes, derived from the job: an attempt that wrote its scan and crashed before
 * marking the job done is retried, and the retry's write hits the same id, so a build never gets two static scans.
 */
export function staticScanId(job: Pick<ScanJobDoc, '_id'>): string {
  return `scn_${job._id.replace(/^job_/, '')}`;
}

/**
 * Analyses the uploaded package of the job's build in an analysis worker, waits while its baseline is being made, and
 * has its static scan written once (src/services/static-scans.ts).
 * Throws to ask for a retry, only for the service's own faults (database, storage, a worker that could not start):
 * whatever the package does to its worker ends in a verdict (`scan.incomplete`), written like any other scan.
 */
export async function runScanJob(deps: Deps, job: ScanJobDoc, workers: ScanWorkers = deps.instance.scanWorkers, stopping?: AbortSignal, released?: () => void): Promise<void | 'deferred' | 'handed-back'> {
  const scanId = staticScanId(job);
  // A job runs as the operator, like every piece of work no request asked for.
  const ctx = operatorContext(deps, null);
  if (job.attempts > 1 && (await recordWrittenStaticScan(ctx, job.appId, scanId))) return; // written by an earlier attempt
  const build = await deps.repos.builds.findById(job.appId, job.buildId);
  if (!build?.artifact || build.artifact.status !== 'uploaded') throw new Error('build has no uploaded artifact');
  let pending: PendingScan;
  try {
    pending = job.pendingScan ?? (await analyse(deps, job, { ...build, artifact: build.artifact }, workers, stopping));
  } catch (err) {
    // Stopped before its analysis began (a job readied ahead waiting for a worker): another instance takes it.
    if (err instanceof AnalysisNotStarted && stopping?.aborted) return 'handed-back';
    throw err;
  }
  released?.(); // the worker is free: the runner may start the next analysis while this scan is compared and written
  // The baseline is the latest scan of an earlier-registered release build of the package: while one of those is
  // still being made, wait for it, so the answer never depends on which analysis finished first.
  const waitsFor = isComparable(pending) && (job.deferrals ?? 0) < MAX_DEFERRALS ? await scanToWaitFor(deps, job, build, pending.target.name) : null;
  if (waitsFor) {
    const now = deps.clock.now();
    if (!(await deps.repos.scanJobs.defer(job._id, job.attempts, now, new Date(now.getTime() + DEFER_MS), pending, waitsFor))) {
      throw new Error('the job was taken over while deferring');
    }
    // The job waited for wakes this one when it ends or names another package; one that did so between the look above
    // and the deferral woke nobody, so look again: this job then runs at once rather than after its wait.
    if ((await scanToWaitFor(deps, job, build, pending.target.name)) !== waitsFor) await deps.repos.scanJobs.wake(job._id, now);
    return 'deferred';
  }
  await completeStaticScan(ctx, { scanId, build, pending });
}

/** Analyses the build's package in a worker: what the scan will hold (static-scans.ts: pendingStaticScan). */
async function analyse(deps: Deps, job: ScanJobDoc, build: BuildDoc & { artifact: NonNullable<BuildDoc['artifact']> }, workers: ScanWorkers, stopping?: AbortSignal): Promise<PendingScan> {
  const fileName = `${build._id}.${build.platform === 'ios' ? 'ipa' : 'apk'}`;
  const local = await copyArtifactToTemp(deps.artifacts, build.artifact.storageKey, fileName, build.artifact.sha256);
  let analysis: StaticAnalysis;
  const unmark = () => deps.repos.scanJobs.markAnalysing(job._id, job.attempts, null);
  try {
    // Marked while its worker runs, so that a process the package brings down (memory outside the worker's heap
    // cap, say) is known by the next claim. Every analysis running in that process is marked alike, so a job
    // interrupted once runs alone from then on, and only a second interruption, alone, is blamed on its package
    // (JobRunner: MAX_INTERRUPTED_ANALYSES). Unmarked however it ends (an outcome, a worker that could not start:
    // this process did not die in it), before its slot goes to another; never marked once the service is stopping
    // (an orchestrator may kill it before the analysis ends, which says nothing of the package).
    analysis = await workers.analyze(local.path, build.platform, deps.clock.now(), {
      alone: (job.interruptedAnalyses ?? 0) > 0,
      onStart: async () => {
        if (stopping?.aborted) throw new AnalysisNotStarted('the service is stopping: the analysis is left to another instance');
        await deps.repos.scanJobs.markAnalysing(job._id, job.attempts, deps.clock.now());
        if (stopping?.aborted) await unmark(); // stopped while the mark was written
      },
      onEnd: async () => void (await unmark()),
      // As soon as the package has named itself: the jobs of other packages that wait for this one go on.
      onTarget: (t) => void notePackage(deps, job, t.name),
      signal: stopping,
    });
  } finally {
    await local.cleanup();
  }
  return pendingStaticScan(operatorContext(deps, null), { scanId: staticScanId(job), build, fileName, analysis });
}

/**
 * Records the package an analysis has read, and wakes the jobs waiting for this one that are of another package (this
 * build's scan is no baseline of theirs). A failure only delays them (they look again after DEFER_MS): logged.
 */
async function notePackage(deps: Deps, job: ScanJobDoc, pkg: string): Promise<void> {
  try {
    if (await deps.repos.scanJobs.notePackage(job._id, job.attempts, pkg)) await deps.repos.scanJobs.wakeWaiters(job._id, deps.clock.now(), pkg);
  } catch (err) {
    deps.logger.warn({ err, jobId: job._id }, 'could not record the package of a scan job');
  }
}

/** After the last attempt failed: a static scan that says so, so the build never waits for a scan forever. */
export async function giveUpScanJob(deps: Deps, job: ScanJobDoc): Promise<void> {
  const interrupted = (job.interruptedAnalyses ?? 0) >= MAX_INTERRUPTED_ANALYSES;
  const cause = interrupted ? { kind: 'interrupted' as const } : { kind: 'attempts' as const, attempts: countedAttempts(job) };
  await writeIncompleteStaticScan(operatorContext(deps, null), { scanId: staticScanId(job), appId: job.appId, buildId: job.buildId, cause });
}
