import type { Deps } from '../deps';
import type { Principal } from '../auth/principal';
import type { BuildDoc } from '../data/builds-repo';

/**
 * Extension points of the build lifecycle, filled by the scans domain. They are awaited by builds-service; a hook
 * that throws is logged and does not undo the build or the upload (both are already durable when a hook runs).
 */

/** After a build is stored (createBuild): the preview scan of its declared metadata belongs here. */
export async function onBuildRegistered(_deps: Deps, _build: BuildDoc, _principal: Principal): Promise<void> {
  // Nothing yet: the scans domain makes the preview scan here.
}

/** After an artifact became `uploaded` (exactly once per build): the static scan job is queued here. */
export async function onArtifactUploaded(_deps: Deps, _build: BuildDoc): Promise<void> {
  // Nothing yet: the scans domain queues the static scan job here.
}
