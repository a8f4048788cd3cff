import type { RequestContext } from '../context';
import type { BuildDoc } from '../../data/builds-repo';
import { isAppPrincipal } from '../../auth/principal';
import type { BuildProvenance } from '../../oidc/providers/model';
import { signUploadToken, uploadUrl } from '../../uploads/upload-token';

export interface ArtifactView {
  status: 'pending' | 'uploaded';
  sizeBytes: number;
  sha256: string;
  uploadUrl: string | null;
  uploadUrlExpiresAt: Date | null;
}

/**
 * The upload URL of a pending artifact, signed afresh for each read with the stored expiry (the URL is a bearer
 * credential, so it is never stored). Only a credential of the build's own app that may write builds sees it, as
 * only such a one may ask for a fresh one: staff, and keys or access tokens that only read builds, never get a URL
 * (holding one open would hold the build's upload lock and one of the app's upload slots). An expired one is not
 * offered (POST /v1/builds/{id}/upload-url issues a fresh one).
 */
async function uploadUrlFor(ctx: RequestContext, doc: BuildDoc): Promise<string | null> {
  const artifact = doc.artifact;
  if (!artifact || artifact.status !== 'pending') return null;
  if (!isAppPrincipal(ctx.principal) || ctx.principal.appId !== doc.appId || !ctx.principal.scopes.includes('builds:write')) return null;
  if (artifact.uploadUrlExpiresAt.getTime() <= ctx.clock.now().getTime()) return null;
  const grant = { buildId: doc._id, appId: doc.appId, sizeBytes: artifact.sizeBytes, sha256: artifact.sha256 };
  const token = await signUploadToken(ctx.deps.signingKeys, grant, artifact.uploadUrlExpiresAt);
  return uploadUrl(ctx.deps.config.publicBaseUrl, token);
}

/** The artifact as the API shows it (storage key and upload bookkeeping stay inside); null without one. */
export async function toArtifactView(ctx: RequestContext, doc: BuildDoc): Promise<ArtifactView | null> {
  const a = doc.artifact;
  return (
    a && {
      status: a.status,
      sizeBytes: a.sizeBytes,
      sha256: a.sha256,
      uploadUrl: await uploadUrlFor(ctx, doc),
      uploadUrlExpiresAt: a.status === 'pending' ? a.uploadUrlExpiresAt : null,
    }
  );
}
