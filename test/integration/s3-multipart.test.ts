// Protects: the S3 store's streaming upload (src/storage/s3-multipart.ts) on the test bed's real S3 server: bodies
// of one part, of an exact multiple of the part size and of anything between come back byte for byte; a body that
// fails halfway, or a store that refuses a part, leaves no object and no unfinished multipart upload behind.
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { createBucket, testS3Client } from '../bed/env';
import { MIN_PART_SIZE, partSizeFor, uploadStream } from '../../src/storage/s3-multipart';

let client: S3Client;
let bucket: string;
beforeAll(async () => {
  bucket = await createBucket(`multipart-${randomBytes(4).toString('hex')}`);
  client = testS3Client();
});
afterAll(() => client.destroy());

/** The body as a client sends it: chunks of uneven sizes, so part boundaries fall inside chunks. */
function chunked(bytes: Buffer, failAfter?: number): Readable {
  let offset = 0;
  return new Readable({
    read() {
      if (failAfter !== undefined && offset >= failAfter) return void this.destroy(new Error('client went away'));
      if (offset >= bytes.length) return void this.push(null);
      const n = 40_000 + (offset % 7) * 9_001;
      this.push(bytes.subarray(offset, offset + n));
      offset += n;
    },
  });
}

const upload = (key: string, body: Readable, size: number) =>
  uploadStream(body, size, { client, bucket, key, contentType: 'application/octet-stream', partSize: MIN_PART_SIZE, parallel: 2 });

async function readBack(key: string): Promise<Buffer> {
  const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from(await out.Body!.transformToByteArray());
}

async function exists(key: string): Promise<boolean> {
  return client.send(new HeadObjectCommand({ Bucket: bucket, Key: key })).then(
    () => true,
    () => false,
  );
}

async function unfinishedUploads(key: string): Promise<number> {
  const out = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: key }));
  return out.Uploads?.length ?? 0;
}

describe('bodies that end cleanly', () => {
  const sizes = {
    'smaller than a part (one PUT)': 1_000_000,
    'exactly one part (one PUT)': MIN_PART_SIZE,
    'one byte over a part': MIN_PART_SIZE + 1,
    'an exact multiple of the part size': 3 * MIN_PART_SIZE,
    'five parts and a short last one': 5 * MIN_PART_SIZE + 123_457,
  };
  for (const [name, size] of Object.entries(sizes)) {
    it(`stores ${name} byte for byte`, async () => {
      const bytes = randomBytes(size);
      const key = `ok/${size}`;
      await upload(key, chunked(bytes), size);
      expect((await readBack(key)).equals(bytes)).toBe(true);
      expect(await unfinishedUploads(key)).toBe(0);
    });
  }
});

describe('bodies that fail', () => {
  it('can see an unfinished multipart upload, so the checks below can fail', async () => {
    const key = 'failed/seen';
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }));
    expect(await unfinishedUploads(key)).toBe(1);
    await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId }));
    expect(await unfinishedUploads(key)).toBe(0);
  });

  it('leaves nothing when the body errors in the middle of a multipart upload', async () => {
    const size = 4 * MIN_PART_SIZE;
    const key = 'failed/multipart';
    await expect(upload(key, chunked(randomBytes(size), 2 * MIN_PART_SIZE + 5), size)).rejects.toThrow('client went away');
    expect(await exists(key)).toBe(false);
    expect(await unfinishedUploads(key)).toBe(0);
  });

  it('leaves nothing when the body errors before a single PUT', async () => {
    const key = 'failed/single';
    await expect(upload(key, chunked(randomBytes(100_000), 50_000), 100_000)).rejects.toThrow('client went away');
    expect(await exists(key)).toBe(false);
  });

  it('rejects with the store error when the store refuses the upload', async () => {
    const size = 3 * MIN_PART_SIZE;
    const key = 'failed/refused';
    // A bucket that does not exist: the store refuses the upload, and the error says why.
    const refused = uploadStream(chunked(randomBytes(size)), size, {
      client,
      bucket: `missing-${randomBytes(4).toString('hex')}`,
      key,
      contentType: 'application/octet-stream',
      partSize: MIN_PART_SIZE,
      parallel: 2,
    });
    await expect(refused).rejects.toMatchObject({ name: 'NoSuchBucket' });
  });

  it('refuses a body longer than its declared size on the single-PUT path', async () => {
    const key = 'failed/too-long';
    await expect(upload(key, chunked(randomBytes(200_000)), 100_000)).rejects.toThrow('body longer than its declared size');
    expect(await exists(key)).toBe(false);
  });
});

describe('part sizes', () => {
  it('keeps S3 minimum and grows parts so no body needs more than 10,000', () => {
    expect(partSizeFor(1, 1)).toBe(MIN_PART_SIZE);
    expect(partSizeFor(100 * MIN_PART_SIZE, MIN_PART_SIZE)).toBe(MIN_PART_SIZE);
    const huge = 80 * 1024 ** 3;
    expect(Math.ceil(huge / partSizeFor(huge, MIN_PART_SIZE))).toBeLessThanOrEqual(10_000);
  });
});
