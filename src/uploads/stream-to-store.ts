import type { IncomingMessage } from 'node:http';
import type { ArtifactStore } from '../storage/artifact-store';
import { UploadBodyError, VerifyingStream } from './verifying-stream';
import { metrics } from '../metrics/registry';

export interface Declared {
  sizeBytes: number;
  sha256: string;
}

export interface Transfer {
  /** Stops the transfer with this error (the upload lock was lost, the client stalled). */
  abort(error: UploadBodyError): void;
  done: Promise<void>;
  /** How long no byte has moved through the transfer, on the service clock. */
  idleMs(): number;
  /** Bytes of the body received so far. */
  bytesReceived(): number;
}

/**
 * Streams a request body into the store through a byte counter and a SHA-256, never holding it whole. Resolves once
 * the verified object is visible at `key`; rejects with UploadBodyError (too large, mismatch, client gone, lock
 * lost) or the store's StoreUnavailableError, and then nothing new is visible at `key`.
 * `abort` lets the caller stop the transfer (when the upload lock is lost, or no byte moved for too long).
 */
export function streamToStore(
  store: ArtifactStore,
  key: string,
  req: IncomingMessage,
  declared: Declared,
  now: () => number,
): Transfer {
  const verifier = new VerifyingStream(declared.sizeBytes, declared.sha256, now);
  // A request that closes before its end is a client that went away: fail the body so the store discards it.
  const onClose = () => {
    if (!req.complete) verifier.destroy(new UploadBodyError('client_gone', 'The client disconnected before the end of the body.'));
  };
  const onError = () => onClose();
  req.on('close', onClose);
  req.on('error', onError);
  req.pipe(verifier);
  // Upload metrics: in flight while the body streams, bytes as they arrive, one outcome per body.
  metrics.uploadsInFlight.inc();
  const countBytes = (chunk: Buffer) => metrics.uploadBytes.inc(chunk.length);
  req.on('data', countBytes);
  const stored = store.put(key, verifier, declared.sizeBytes);
  stored.then(
    () => metrics.uploads.inc({ outcome: 'stored' }),
    (error) => metrics.uploads.inc({ outcome: error instanceof UploadBodyError ? error.kind : 'store_error' }),
  );
  const done = stored.finally(() => {
    metrics.uploadsInFlight.dec();
    req.off('data', countBytes);
    req.unpipe(verifier);
    req.off('close', onClose);
    req.off('error', onError);
    if (!verifier.destroyed) verifier.destroy();
  });
  return { abort: (error) => verifier.destroy(error), done, idleMs: () => now() - verifier.lastChunkAt, bytesReceived: () => verifier.bytesSeen };
}
