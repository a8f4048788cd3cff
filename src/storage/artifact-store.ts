import type { Readable } from 'node:stream';

/**
 * Where artifact bytes live: the filesystem (single instance, embedded default) or S3 (ARTIFACT_STORE=s3).
 *
 * Invariant of `put`: the object at `key` becomes visible only when `body` ends without error. A body that errors
 * (a size or hash mismatch raised by the verifying stream, a client that disconnects) leaves nothing visible at
 * `key`, and a previous object there, if any, is left as it was.
 */
export interface ArtifactStore {
  readonly kind: 'fs' | 's3';
  /** Prepares the store (directory, bucket). Called at start; `put` calls it again while it has not succeeded. */
  init(): Promise<void>;
  /** Streams `body` to `key`. Rejects with the body's own error when the body failed, StoreUnavailableError otherwise. */
  put(key: string, body: Readable, sizeBytes: number): Promise<void>;
  /** Opens a stored object for reading (the static scan reads the package); null when it does not exist. */
  get(key: string): Promise<Readable | null>;
  exists(key: string): Promise<boolean>;
  delete(key: string): Promise<void>;
}

/** The store could not be reached or refused the write: the client should retry later (503). */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

/** Keys are `<appId>/<buildId>`: only id characters and one slash, so no key can escape the store's root. */
export const KEY_PATTERN = /^[A-Za-z0-9_-]+\/[A-Za-z0-9_-]+$/;

export function assertKey(key: string): void {
  if (!KEY_PATTERN.test(key)) throw new Error(`invalid artifact key: ${key}`);
}

export function artifactKey(appId: string, buildId: string): string {
  const key = `${appId}/${buildId}`;
  assertKey(key);
  return key;
}
