import type { RequestContext } from './context';
import type { BuildDoc } from '../data/builds-repo';
import { createPreviewScan, queueStaticScan } from './scans-service';

/**
 * Extension points of the build lifecycle, filled by the scans domain. They are awaited by builds-service; a hook
 * that throws is logged and does not undo the build or the upload (both are already durable when a hook runs).
 */

/** After a build is stored (createBuild): the preview scan of its declared metadata, made before the answer. */
export async function onBuildRegistered(ctx: RequestContext, build: BuildDoc): Promise<void> {
  await createPreviewScan(ctx, build);
}

/**
 * After an artifact became `uploaded` (exactly once per build): the static scan is queued as a durable job and runs
 * off the request path (src/jobs). The job is unique per build, so a repeated call queues nothing more.
 */
export async function onArtifactUploaded(ctx: RequestContext, build: BuildDoc): Promise<void> {
  await queueStaticScan(ctx, build);
  await ctx.repos.builds.markScanQueued(build.appId, build._id, ctx.clock.now());
}

/**
 * An upload marked uploaded this long ago without its job is owed; a younger one is most likely being queued by its
 * own request right now (the soak saw the sweep "recover" live uploads every minute, which is harmless but hides the
 * real ones in the log).
 */
export const OWED_AFTER_MS = 30_000;

/**
 * Queues the static scans still owed: a process that died between marking an artifact uploaded and queueing its
 * job leaves such a build. Queueing is unique per build, so running this beside a live upload queues nothing twice.
 */
export async function queueOwedStaticScans(ctx: RequestContext, limit = 100): Promise<number> {
  const owed = await ctx.repos.builds.listUploadedWithoutScanJob(limit, new Date(ctx.clock.now().getTime() - OWED_AFTER_MS));
  for (const build of owed) await onArtifactUploaded(ctx, build);
  return owed.length;
}
