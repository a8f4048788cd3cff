import { notifyScanCompleted } from '../webhooks/enqueue';
import type { Deps } from '../core/deps';
import type { PendingScan, ScanJobDoc } from '../data/scan-jobs-repo';
import type { BuildDoc } from '../data/builds-repo';
import type { ScanDoc } from '../data/scans-repo';
import { UNANALYSED_FINDING_IDS, type Finding } from '../scan';
import type { StaticAnalysis } from '../scan/static';
import type { ScanWorkers } from '../scan/worker';
import { appName, scanDoc } from '../services/scans-service';
import { copyArtifactToTemp } from './artifact-file';
import { recordStaticGrade } from '../services/builds/latest-build';
import { MAX_INTERRUPTED_ANALYSES, countedAttempts } from './job-runner';
import { compareScan, scanToWaitFor } from '../services/scan-baseline';
import { operatorContext } from '../services/operator-context';
import { checkSigningContinuity, withFindings } from '../services/signing-continuity';
import { LIMITS } from '../scan/static/package/limits';

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
 * Analyses the uploaded package of the job's build in an analysis worker and writes its static scan (once).
 * Throws to ask for a retry, only for the service's own faults (database, storage, a worker that could not start):
 * whatever the package does to its worker ends in a verdict (`scan.incomplete`), written like any other scan.
 */
export async function runScanJob(deps: Deps, job: ScanJobDoc, workers: ScanWorkers = deps.instance.scanWorkers, stopping?: AbortSignal, released?: () => void): Promise<void | 'deferred'> {
  const scanId = staticScanId(job);
  // Only an earlier attempt can have written the scan: the first claim skips the look.
  const written = job.attempts > 1 ? await deps.repos.scans.findById(job.appId, scanId) : null;
  if (written) return recordStaticGrade(operatorContext(deps, null), written); // written by an earlier attempt, which may have stopped before this
  const build = await deps.repos.builds.findById(job.appId, job.buildId);
  if (!build?.artifact || build.artifact.status !== 'uploaded') throw new Error('build has no uploaded artifact');
  const pending = job.pendingScan ?? (await analyse(deps, job, { ...build, artifact: build.artifact }, workers, stopping));
  released?.(); // the worker is free: the runner may start the next analysis while this scan is compared and written
  // The baseline is the latest scan of an earlier-registered release build of the package: while one of those is
  // still being made, wait for it, so the answer never depends on which analysis finished first.
  // A package not analysed (unreadable, stopped at a limit) is compared with nothing and is never a baseline: every
  // finding of the last build would otherwise read as fixed, and come back as new after it.
  const comparable = pending.named && !pending.findings.some((f) => UNANALYSED_FINDING_IDS.has(f.id));
  const waitsFor = comparable && (job.deferrals ?? 0) < MAX_DEFERRALS ? await scanToWaitFor(deps, job, build, pending.target.name) : null;
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
  const at = deps.clock.now();
  const key = { appId: job.appId, engine: 'static' as const, target: pending.target, build, pkg: pending.target.name, at, comparable, release: build.release === true };
  const compared = await compareScan(deps, key, pending.findings);
  const signerContinuity = pending.signerContinuity ?? null;
  await writeStaticScan(deps, scanDoc({ _id: scanId, appId: job.appId, buildId: job.buildId, engine: 'static', target: pending.target, ...compared, signing: pending.signing, signerContinuity, inventory: pending.inventory, createdAt: at }));
}

/** Analyses the build's package in a worker and checks its signer's continuity: what the scan will hold. */
async function analyse(deps: Deps, job: ScanJobDoc, build: BuildDoc & { artifact: NonNullable<BuildDoc['artifact']> }, workers: ScanWorkers, stopping?: AbortSignal): Promise<PendingScan> {
  const scanId = staticScanId(job);
  // A job runs as the operator, like every piece of work no request asked for.
  const ctx = operatorContext(deps, null);

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
        if (stopping?.aborted) throw new Error('the service is stopping: the analysis is left to another instance');
        await deps.repos.scanJobs.markAnalysing(job._id, job.attempts, deps.clock.now());
        if (stopping?.aborted) await unmark(); // stopped while the mark was written
      },
      onEnd: async () => void (await unmark()),
      // As soon as the package has named itself: the jobs of other packages that wait for this one go on.
      onTarget: (t) => void notePackage(deps, job, t.name),
    });
  } finally {
    await local.cleanup();
  }
  // A package that could not be read names no app: the target is then the app and version the build declared,
  // never the name of our temporary file.
  const named = analysis.target.name !== fileName;
  const target = named
    ? { platform: build.platform, name: analysis.target.name, version: analysis.target.version }
    : { platform: build.platform, name: await appName(ctx, build.appId), version: build.version };
  // Continuity findings join the analyser's before the scan is scored (scanDoc), so a changed signer lowers the grade.
  // Only a release build records or moves the package's signer; any other is compared with the release's record.
  const release = build.release === true;
  const continuity = named ? await checkSigningContinuity(ctx, { appId: job.appId, platform: build.platform, package: target.name, scanId, signing: analysis.signing, release }) : null;
  const findings = withFindings(analysis.findings, continuity?.findings ?? [], LIMITS.findings);
  const signerContinuity = continuity && { verdict: continuity.verdict, releaseBuild: release };
  return { target, named, findings, signing: named ? analysis.signing : null, signerContinuity, inventory: named ? analysis.inventory : null };
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
  const build = await deps.repos.builds.findById(job.appId, job.buildId);
  const target = {
    platform: build?.platform ?? 'android',
    name: await appName(operatorContext(deps, null), job.appId),
    version: build?.version ?? null,
  };
  const interrupted = (job.interruptedAnalyses ?? 0) >= MAX_INTERRUPTED_ANALYSES;
  const findings = [interrupted ? interruptedFinding() : incompleteFinding(countedAttempts(job))];
  // Compared with nothing and never a baseline, but suppressions are matched like any scan's (none applies to these).
  const at = deps.clock.now();
  const compared = await compareScan(deps, { appId: job.appId, engine: 'static', target, build: { _id: job.buildId, createdAt: build?.createdAt ?? at }, pkg: target.name, at, comparable: false, release: false }, findings);
  await writeStaticScan(deps, scanDoc({ _id: staticScanId(job), appId: job.appId, buildId: job.buildId, engine: 'static', target, ...compared, signing: null, signerContinuity: null, inventory: null, createdAt: at }));
}

/** Writes the scan once, and queues its `scan.completed` webhooks once each whichever attempt gets there (never failing the job). */
async function writeStaticScan(deps: Deps, scan: ScanDoc): Promise<void> {
  const inserted = await deps.repos.scans.insertOnce(scan);
  // Either way the stored scan: a retry's write of the same id leaves the first scan as it was.
  const stored = inserted ? scan : ((await deps.repos.scans.findById(scan.appId, scan._id)) ?? scan);
  await recordStaticGrade(operatorContext(deps, null), stored);
  // Every attempt queues the webhooks, each once by its derived id: an instance that died between writing the scan
  // and queueing them leaves the queueing to the retry.
  await notifyScanCompleted(deps, {
    appId: stored.appId,
    scanId: stored._id,
    buildId: stored.buildId,
    grade: stored.grade,
    score: stored.score,
    diff: stored.diff ?? null,
    fixedFindings: stored.fixedFindings ?? [],
    unsuppressed: stored.unsuppressed ?? [],
  });
}

/** A package whose analysis ended the service's process (not only its worker) more than once. */
function interruptedFinding(): Finding {
  return {
    id: 'scan.incomplete',
    severity: 'high',
    title: 'Static analysis could not complete',
    detail: 'The analysis of the uploaded package stopped the analysing process more than once, so it was not tried again. A package built by the usual tools never does this. This scan says nothing about the app\'s security.',
    fix: 'Check that the uploaded file is the package your build produced (for example with `unzip -l`), then register the build again and upload it; if this scan repeats, contact support with this scan id.',
  };
}

// The cause (a storage outage, a corrupted stored object) stays in the job's lastError: it is internal detail.
function incompleteFinding(attempts: number): Finding {
  return {
    id: 'scan.incomplete',
    severity: 'high',
    title: 'Static analysis could not complete',
    detail: `The uploaded package could not be analysed after ${attempts} attempts (it could not be read back from artifact storage, or the analysis was interrupted each time). This scan says nothing about the app's security.`,
    fix: 'Register the build again and upload the same package to its new upload URL; if this scan repeats, contact support with this scan id.',
  };
}
