import type { RequestContext } from './context';
import type { BuildDoc } from '../data/builds-repo';
import type { PendingScan } from '../data/scan-jobs-repo';
import type { ScanDoc } from '../data/scans-repo';
import { UNANALYSED_FINDING_IDS, incompleteFinding, type IncompleteCause, type StaticAnalysis } from '../scan';
import { LIMITS } from '../scan/static/package/limits';
import { notifyScanCompleted } from '../webhooks/enqueue';
import { recordStaticGrade } from './builds/latest-build';
import { compareScan } from './scan-baseline';
import { appName, scanDoc } from './scans-service';
import { checkSigningContinuity, withFindings } from './signing-continuity';

// The static scan of an uploaded package, from what its analysis found to the stored scan: signer continuity, the
// baseline and suppressions, the score, one write, the build's grade and the webhooks. The job that runs the analysis
// (src/jobs/scan-job.ts) keeps the queue's concerns: the lease, the worker, the deferral while a baseline is made.
// Every function here runs as the operator (the job's context): no request asked for this work.

/**
 * What a finished analysis makes the scan of: its target, and its findings with signer continuity's joined before
 * the scan is scored (a changed signer lowers the grade). Only a release build records or moves the package's
 * signer; any other is compared with the release's record. A package that could not be read names no app: its
 * target is then the app and version the build declared, never the name of the file analysed.
 */
export async function pendingStaticScan(
  ctx: RequestContext,
  input: { scanId: string; build: Pick<BuildDoc, 'appId' | 'platform' | 'version' | 'release'>; fileName: string; analysis: StaticAnalysis },
): Promise<PendingScan> {
  const { scanId, build, analysis } = input;
  const named = analysis.target.name !== input.fileName;
  // Only a package analysed to the end names itself (an analysis that stops names the file), so only such a scan
  // records a version code: the one device attestation looks the build up by (ScansRepo.latestStaticForVersionCode).
  const target = named
    ? { platform: build.platform, name: analysis.target.name, version: analysis.target.version, versionCode: analysis.target.versionCode }
    : { platform: build.platform, name: await appName(ctx, build.appId), version: build.version, versionCode: null };
  const release = build.release === true;
  const continuity = named ? await checkSigningContinuity(ctx, { appId: build.appId, platform: build.platform, package: target.name, scanId, signing: analysis.signing, release }) : null;
  const findings = withFindings(analysis.findings, continuity?.findings ?? [], LIMITS.findings);
  const signerContinuity = continuity && { verdict: continuity.verdict, releaseBuild: release };
  return { target, named, findings, signing: named ? analysis.signing : null, signerContinuity, inventory: named ? analysis.inventory : null };
}

/**
 * Whether the scan can be compared: a package not analysed (unreadable, stopped at a limit) is compared with nothing
 * and is never a baseline, since every finding of the last build would otherwise read as fixed, and come back as new
 * after it.
 */
export function isComparable(pending: PendingScan): boolean {
  return pending.named && !pending.findings.some((f) => UNANALYSED_FINDING_IDS.has(f.id));
}

/** Writes the static scan of a finished analysis, compared with its baseline (the latest scan of an earlier release build of the package). */
export async function completeStaticScan(ctx: RequestContext, input: { scanId: string; build: Pick<BuildDoc, '_id' | 'appId' | 'createdAt' | 'release'>; pending: PendingScan }): Promise<void> {
  const { scanId, build, pending } = input;
  const at = ctx.clock.now();
  const comparable = isComparable(pending);
  const key = { appId: build.appId, engine: 'static' as const, target: pending.target, build, pkg: pending.target.name, at, comparable, release: build.release === true };
  const compared = await compareScan(ctx, key, pending.findings);
  await writeOnce(ctx, scanDoc({ _id: scanId, appId: build.appId, buildId: build._id, engine: 'static', target: pending.target, ...compared, signing: pending.signing, signerContinuity: pending.signerContinuity ?? null, inventory: pending.inventory, createdAt: at }));
}

/**
 * The scan of a package whose analysis could not complete (`scan.incomplete`), so the build never waits for a scan
 * forever. Compared with nothing and never a baseline, but suppressions are matched like any scan's (none applies).
 */
export async function writeIncompleteStaticScan(ctx: RequestContext, input: { scanId: string; appId: string; buildId: string; cause: IncompleteCause }): Promise<void> {
  const build = await ctx.repos.builds.findById(input.appId, input.buildId);
  const target = { platform: build?.platform ?? 'android', name: await appName(ctx, input.appId), version: build?.version ?? null, versionCode: null };
  const at = ctx.clock.now();
  const key = { appId: input.appId, engine: 'static' as const, target, build: { _id: input.buildId, createdAt: build?.createdAt ?? at }, pkg: target.name, at, comparable: false, release: false };
  const compared = await compareScan(ctx, key, [incompleteFinding(input.cause)]);
  await writeOnce(ctx, scanDoc({ _id: input.scanId, appId: input.appId, buildId: input.buildId, engine: 'static', target, ...compared, signing: null, signerContinuity: null, inventory: null, createdAt: at }));
}

/**
 * A scan an earlier attempt wrote, its grade recorded again (that attempt may have stopped before); false when there
 * is none. Only an earlier attempt can have written it, so a first attempt does not look.
 */
export async function recordWrittenStaticScan(ctx: RequestContext, appId: string, scanId: string): Promise<boolean> {
  const written = await ctx.repos.scans.findById(appId, scanId);
  if (written) await recordStaticGrade(ctx, written);
  return written !== null;
}

/** Writes the scan once, and queues its `scan.completed` webhooks once each whichever attempt gets there (never failing the job). */
async function writeOnce(ctx: RequestContext, scan: ScanDoc): Promise<void> {
  const inserted = await ctx.repos.scans.insertOnce(scan);
  // Either way the stored scan: a retry's write of the same id leaves the first scan as it was.
  const stored = inserted ? scan : ((await ctx.repos.scans.findById(scan.appId, scan._id)) ?? scan);
  await recordStaticGrade(ctx, stored);
  // Every attempt queues the webhooks, each once by its derived id: an instance that died between writing the scan
  // and queueing them leaves the queueing to the retry.
  await notifyScanCompleted(ctx.deps, {
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
