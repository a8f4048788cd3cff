import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

export type UploadFailureKind = 'too_large' | 'mismatch' | 'client_gone' | 'lock_lost' | 'stalled';

/** Why the body of an upload was refused (raised by the stream itself, so the store never completes the object). */
export class UploadBodyError extends Error {
  constructor(
    readonly kind: UploadFailureKind,
    message: string,
  ) {
    super(message);
    this.name = 'UploadBodyError';
  }
}

/**
 * Passes the body through while counting bytes and hashing them. It fails before its end when the body differs from
 * the declaration: at the first byte past the declared size (so at most one chunk past declared + 1 is read), and in
 * its flush when the body is shorter or its SHA-256 differs. A store only completes an object whose body ended
 * cleanly, so a refused body never becomes visible.
 */
export class VerifyingStream extends Transform {
  private bytes = 0;
  private readonly hash: Hash = createHash('sha256');
  private lastChunk: number;

  /** `now` is the service clock: idleness is measured on it, so tests advance time instead of waiting. */
  constructor(
    private readonly declaredSize: number,
    private readonly declaredSha256: string,
    private readonly now: () => number = Date.now,
  ) {
    super();
    this.lastChunk = now();
  }

  /** When the last chunk went through (or the stream was made): what the stall watchdog measures from. */
  get lastChunkAt(): number {
    return this.lastChunk;
  }

  get bytesSeen(): number {
    return this.bytes;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, callback: TransformCallback): void {
    this.lastChunk = this.now();
    if (this.bytes + chunk.length > this.declaredSize) {
      this.bytes += chunk.length;
      callback(new UploadBodyError('too_large', `The body is larger than the declared ${this.declaredSize} bytes.`));
      return;
    }
    this.bytes += chunk.length;
    this.hash.update(chunk);
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    if (this.bytes !== this.declaredSize) {
      callback(new UploadBodyError('mismatch', `The body has ${this.bytes} bytes; ${this.declaredSize} were declared.`));
      return;
    }
    if (this.hash.digest('hex') !== this.declaredSha256) {
      callback(new UploadBodyError('mismatch', 'The SHA-256 of the body differs from the declared one.'));
      return;
    }
    callback();
  }
}
