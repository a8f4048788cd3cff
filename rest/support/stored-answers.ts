import type { Deps } from '../../src/core/deps';
import { signUploadToken, uploadUrl } from '../../src/uploads/upload-token';

/**
 * An answer kept for Idempotency-Key replays holds no bearer credential: a Build's upload URL is taken out before the
 * answer is stored (24 hours in MongoDB) and signed afresh, with the stored expiry, when it is replayed. The replay is
 * the stored answer: the same build, the same artifact, a URL good for the same window (and none once it has passed,
 * as a read of the build gives none).
 */

interface RestArtifact {
  status?: unknown;
  sizeBytes?: unknown;
  sha256?: unknown;
  uploadUrl?: unknown;
  uploadUrlExpiresAt?: unknown;
}

function parse(body: unknown): { id?: unknown; appId?: unknown; artifact?: RestArtifact } | null {
  if (typeof body !== 'string' || !body.includes('"uploadUrlExpiresAt"')) return null;
  try {
    const parsed = JSON.parse(body) as unknown;
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as { artifact?: RestArtifact }) : null;
  } catch {
    return null;
  }
}

/** The answer as it is stored: without its upload URL. */
export function storable(body: unknown): unknown {
  const answer = parse(body);
  if (!answer?.artifact || typeof answer.artifact.uploadUrl !== 'string') return body;
  delete answer.artifact.uploadUrl;
  return JSON.stringify(answer);
}

/** The stored answer as it is replayed at `now`: its upload URL signed again, or dropped with its expiry if past. */
export async function replayable(deps: Pick<Deps, 'signingKeys' | 'config'>, body: unknown, now: Date): Promise<unknown> {
  const answer = parse(body);
  const artifact = answer?.artifact;
  if (!answer || !artifact || artifact.status !== 'pending' || typeof artifact.uploadUrlExpiresAt !== 'string') return body;
  const expiresAt = new Date(artifact.uploadUrlExpiresAt);
  const { uploadUrlExpiresAt: _expiry, ...rest } = artifact;
  if (!(expiresAt.getTime() > now.getTime()) || typeof answer.id !== 'string' || typeof answer.appId !== 'string') {
    return JSON.stringify({ ...answer, artifact: rest });
  }
  const grant = { buildId: answer.id, appId: answer.appId, sizeBytes: Number(artifact.sizeBytes), sha256: String(artifact.sha256) };
  const url = uploadUrl(deps.config.publicBaseUrl, await signUploadToken(deps.signingKeys, grant, expiresAt));
  return JSON.stringify({ ...answer, artifact: { ...rest, uploadUrl: url, uploadUrlExpiresAt: artifact.uploadUrlExpiresAt } });
}
