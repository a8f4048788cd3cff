import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { RequestContext } from '../services/context';
import type { BuildDoc } from '../data/builds-repo';
import { DomainError, notFound } from '../core/errors';
import { StoreUnavailableError } from '../storage/artifact-store';
import { verifyUploadToken } from './upload-token';
import { UploadBodyError } from './verifying-stream';
import { streamToStore } from './stream-to-store';
import { acquireUploadBudget } from './upload-budget';

/**
 * The upload lock's lease: a crashed instance blocks retries for at most this long. While the upload runs, a watchdog
 * renews it, unless no byte moved for UPLOAD_IDLE_TIMEOUT_S: a stalled or half-open connection (a CI runner whose
 * network dropped without a reset) would otherwise hold the lock, and refuse every retry as in progress, for as long
 * as the operating system keeps the dead socket.
 */
const LOCK_LEASE_MS = 60_000;
const LOCK_RENEW_MS = 20_000;
/** What a 503 asks the client to wait before retrying. */
const STORE_RETRY_AFTER_S = 5;

function refusal(error: unknown): unknown {
  if (error instanceof UploadBodyError) {
    switch (error.kind) {
      case 'too_large':
        return new DomainError('payload_too_large', error.message);
      case 'mismatch':
        return new DomainError('artifact_mismatch', `${error.message} The artifact stays pending; the same URL may be used again.`);
      case 'lock_lost':
        return new DomainError('upload_in_progress', 'Another upload of this artifact took over.');
      case 'client_gone': // nobody reads this answer; a 400, not an unexpected error in the logs
        return new DomainError('malformed_request', error.message);
      case 'stalled':
        return new DomainError('malformed_request', `${error.message} The artifact stays pending; the same URL may be used again.`);
    }
  }
  if (error instanceof StoreUnavailableError) {
    return new DomainError('unavailable', 'The artifact store is unavailable; retry the upload later.', { retryAfter: STORE_RETRY_AFTER_S, cause: error });
  }
  return error;
}

/**
 * PUT /v1/uploads/{token}: the token is the credential. Verifies it, takes the build's upload lock, streams the body
 * through the verifying stream into the store, and moves the artifact pending -> uploaded. Exactly one upload wins:
 * the lock refuses a concurrent one (409 upload_in_progress), and the final transition is one conditional update
 * (a later one: 409 artifact_already_uploaded). Returns the build as stored after the transition; what follows an
 * upload (the static scan) is the builds service's (uploadBuildArtifact).
 */
export async function receiveUpload(ctx: RequestContext, unverifiedToken: string, body: IncomingMessage, clientAddress: string): Promise<BuildDoc> {
  const deps = ctx.deps;
  const failures = deps.instance.failedUploadTokens;
  const invalid = () => new DomainError('upload_url_invalid', 'The upload URL is invalid or expired.');
  // An address whose tokens keep failing has its tokens' signatures checked without a database read: a forged one
  // gets the same answer without a look, a genuine one (a shared CI egress) is honoured as from any address.
  if (failures.blocked(clientAddress) && !(await deps.signingKeys.signatureHolds('upload', unverifiedToken))) throw invalid();
  const grant = await verifyUploadToken(deps.signingKeys, unverifiedToken);
  if (!grant) {
    await failures.record(clientAddress);
    throw invalid();
  }
  const before = await deps.repos.builds.findById(grant.appId, grant.buildId);
  if (!before?.artifact) throw notFound('Build');
  if (before.artifact.sizeBytes !== grant.sizeBytes || before.artifact.sha256 !== grant.sha256) {
    throw new DomainError('upload_url_invalid', 'The upload URL does not match the build.');
  }
  if (before.artifact.status === 'uploaded') throw new DomainError('artifact_already_uploaded', 'The artifact is already uploaded.');
  // A declared length over the artifact's is refused before a byte is read (the answer then ends the connection,
  // src/http/early-answer.ts), rather than once the stream has taken the declared size.
  const declared = Number(body.headers['content-length']);
  if (Number.isSafeInteger(declared) && declared > grant.sizeBytes) {
    throw new DomainError('payload_too_large', `The body is larger than the declared ${grant.sizeBytes} bytes.`);
  }

  const holder = randomBytes(12).toString('hex');
  const locks = deps.repos.uploadLocks;
  // Budgets first (503 for the instance, 409 too_many_uploads for the app), then the artifact's own lock.
  const budget = await acquireUploadBudget(deps, grant.appId, holder, deps.clock.now(), LOCK_LEASE_MS);
  let renewer: NodeJS.Timeout | undefined;
  let locked = false;
  try {
    if (!(await locks.acquire(grant.buildId, holder, deps.clock.now(), LOCK_LEASE_MS))) {
      throw new DomainError('upload_in_progress', 'Another upload of this artifact is in progress.');
    }
    locked = true;
    // Checked again under the lock: an upload that finished between the first read and the lock wins.
    const build = await deps.repos.builds.findById(grant.appId, grant.buildId);
    if (!build?.artifact) throw notFound('Build');
    if (build.artifact.status === 'uploaded') throw new DomainError('artifact_already_uploaded', 'The artifact is already uploaded.');

    const now = () => deps.clock.now().getTime();
    const transfer = streamToStore(deps.artifacts, build.artifact.storageKey, body, grant, now);
    const idleLimitMs = deps.config.uploadIdleTimeoutMs;
    const minBytesPerWindow = (deps.config.uploadMinRateKbps * 1024 * idleLimitMs) / 1000;
    let renewedAt = now();
    const startedAt = now();
    let window = { startedAt: now(), bytesAtStart: 0 };
    // Ticks often enough to notice a stall soon after the limit; renews the lease every LOCK_RENEW_MS of service time.
    renewer = setInterval(() => {
      if (transfer.idleMs() > idleLimitMs) {
        transfer.abort(new UploadBodyError('stalled', `No byte of the body arrived for ${idleLimitMs / 1000} s; the upload was stopped.`));
        return;
      }
      // A body just over the minimum rate still holds the lock and a slot for as long as its size allows (a day and a
      // half for 500 MB at 4 KB/s): an upload also ends after UPLOAD_MAX_MINUTES.
      const maxMs = deps.config.uploadMaxDurationMs;
      if (now() - startedAt > maxMs) {
        const minutes = maxMs / 60_000;
        transfer.abort(new UploadBodyError('stalled', `The upload took longer than ${minutes} minute${minutes === 1 ? '' : 's'}; it was stopped.`));
        return;
      }
      // A body trickling a byte now and then is never idle, yet holds the artifact's lock and an upload slot for
      // ever: each window of the idle limit must also carry the minimum rate.
      if (now() - window.startedAt >= idleLimitMs) {
        const moved = transfer.bytesReceived() - window.bytesAtStart;
        if (moved < minBytesPerWindow) {
          const rate = `${deps.config.uploadMinRateKbps} KB/s`;
          transfer.abort(new UploadBodyError('stalled', `The body arrived at less than ${rate} for ${idleLimitMs / 1000} s; the upload was stopped.`));
          return;
        }
        window = { startedAt: now(), bytesAtStart: transfer.bytesReceived() };
      }
      const at = deps.clock.now();
      if (at.getTime() - renewedAt < LOCK_RENEW_MS) return;
      renewedAt = at.getTime();
      locks.renew(grant.buildId, holder, at, LOCK_LEASE_MS).then(
        (held) => held || transfer.abort(new UploadBodyError('lock_lost', 'upload lock lost')),
        (err) => ctx.logger.warn({ err }, 'upload lock renewal failed'),
      );
      budget.renew(at, LOCK_LEASE_MS).catch((err) => ctx.logger.warn({ err }, 'upload slot renewal failed'));
    }, Math.min(LOCK_RENEW_MS, Math.max(50, idleLimitMs / 4)));
    try {
      await transfer.done;
    } catch (error) {
      throw refusal(error);
    }

    const uploadedAt = deps.clock.now();
    if (!(await deps.repos.builds.markUploaded(grant.appId, grant.buildId, uploadedAt))) {
      throw new DomainError('artifact_already_uploaded', 'The artifact is already uploaded.');
    }
    const uploaded: BuildDoc = { ...build, artifact: { ...build.artifact, status: 'uploaded', uploadedAt } };
    return uploaded;
  } finally {
    clearInterval(renewer);
    if (locked) await locks.release(grant.buildId, holder).catch((err) => ctx.logger.warn({ err }, 'upload lock release failed'));
    await budget.release().catch((err) => ctx.logger.warn({ err }, 'upload slot release failed'));
  }
}
