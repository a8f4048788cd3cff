import type { Readable } from 'node:stream';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { assertKey, StoreUnavailableError, type ArtifactStore } from './artifact-store';
import { uploadStream } from './s3-multipart';
import { ensureAbortRule, type LifecycleOutcome } from './s3-lifecycle';
import type { Logger } from '../core/logger';

export interface S3StoreOptions {
  bucket: string;
  endpoint: string | null;
  region: string;
  forcePathStyle: boolean;
  credentials: { accessKeyId: string; secretAccessKey: string } | null; // null: the SDK's default chain
}

function isNotFound(error: unknown): boolean {
  if (!(error instanceof S3ServiceException)) return false;
  return error.$metadata?.httpStatusCode === 404 || error.name === 'NotFound' || error.name === 'NoSuchKey' || error.name === 'NoSuchBucket';
}

/**
 * Artifacts in an S3 bucket. Bodies are streamed by uploadStream (s3-multipart.ts): a single PUT up to one part,
 * multipart above, with a fixed set of part buffers.
 *
 * Nothing becomes visible before the body ended cleanly: the upload is completed only after the body was read to
 * its end, and the verifying stream the service hands in raises its size/hash mismatch before it ends. On any error
 * the multipart upload is aborted, so a mismatch or a disconnect leaves no object and no billable parts behind (an
 * abort that fails while the server is down leaves invisible parts, which a bucket lifecycle rule for incomplete
 * uploads cleans).
 */
export class S3ArtifactStore implements ArtifactStore {
  readonly kind = 's3' as const;
  private readonly client: S3Client;
  private bucketReady: Promise<void> | null = null;
  /** What the bucket's lifecycle rule for incomplete multipart uploads came to at start (null: not tried yet). */
  lifecycle: LifecycleOutcome | 'failed' | null = null;

  constructor(
    private readonly options: S3StoreOptions,
    private readonly logger: Logger,
  ) {
    this.client = new S3Client({
      region: options.region,
      endpoint: options.endpoint ?? undefined,
      forcePathStyle: options.forcePathStyle,
      credentials: options.credentials ?? undefined,
      maxAttempts: 2, // a store that is down answers 503 quickly; the client retries the upload as a whole
      requestHandler: { connectionTimeout: 3_000, requestTimeout: 60_000 },
    });
  }

  /** Creates the bucket when it is missing. Remembered once it succeeded; a failure is tried again on next use. */
  init(): Promise<void> {
    if (!this.bucketReady) {
      this.bucketReady = this.ensureBucket().catch((error) => {
        this.bucketReady = null;
        throw new StoreUnavailableError('artifact bucket not reachable', { cause: error });
      });
    }
    return this.bucketReady;
  }

  private async ensureBucket(): Promise<void> {
    await this.createBucketIfMissing();
    this.lifecycle = await this.ensureLifecycle();
  }

  /** The abort rule is housekeeping: a store that refuses it (no permission, no support) still takes uploads. */
  private async ensureLifecycle(): Promise<LifecycleOutcome | 'failed'> {
    const bucket = this.options.bucket;
    try {
      const outcome = await ensureAbortRule(this.client, bucket);
      if (outcome === 'unsupported') this.logger.info({ bucket }, 'artifact store has no lifecycle rules: unfinished multipart uploads are only aborted by the service');
      else this.logger.info({ bucket, outcome }, 'lifecycle rule for incomplete multipart uploads');
      return outcome;
    } catch (error) {
      this.logger.warn({ bucket, err: { message: (error as Error).message } }, 'could not set the lifecycle rule for incomplete multipart uploads');
      return 'failed';
    }
  }

  private async createBucketIfMissing(): Promise<void> {
    const Bucket = this.options.bucket;
    try {
      await this.client.send(new HeadBucketCommand({ Bucket }));
      return;
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    try {
      await this.client.send(new CreateBucketCommand({ Bucket }));
      this.logger.info({ bucket: Bucket }, 'artifact bucket created');
    } catch (error) {
      // Another instance created it meanwhile.
      if (error instanceof S3ServiceException && ['BucketAlreadyOwnedByYou', 'BucketAlreadyExists'].includes(error.name)) return;
      throw error;
    }
  }

  async put(key: string, body: Readable, sizeBytes: number): Promise<void> {
    assertKey(key);
    let bodyError: unknown = null;
    body.once('error', (err) => (bodyError = err));
    try {
      await this.init();
      await uploadStream(body, sizeBytes, {
        client: this.client,
        bucket: this.options.bucket,
        key,
        contentType: 'application/octet-stream',
      });
    } catch (error) {
      if (bodyError) throw bodyError;
      if (error instanceof StoreUnavailableError) throw error;
      throw new StoreUnavailableError('artifact store write failed', { cause: error });
    }
  }

  async get(key: string): Promise<Readable | null> {
    assertKey(key);
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: key }));
      return out.Body as Readable;
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  async exists(key: string): Promise<boolean> {
    assertKey(key);
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.options.bucket, Key: key }));
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    assertKey(key);
    await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: key }));
  }

  destroy(): void {
    this.client.destroy();
  }
}
