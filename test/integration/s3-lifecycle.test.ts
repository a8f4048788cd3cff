// Protects: the S3 store sets up its bucket at start on a store without lifecycle rules (the test bed's versitygw
// answers 501 NotImplemented to them): start-up goes on, says so once, and uploads work.
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { createLogger } from '../../src/core/logger';
import { S3ArtifactStore } from '../../src/storage/s3-store';
import { testBed } from '../bed/env';

it('creates the bucket, records that the store has no lifecycle rules, and still takes uploads', async () => {
  const { s3 } = testBed();
  const lines: string[] = [];
  const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
  const bucket = `lifecycle-${randomBytes(4).toString('hex')}`;
  const store = new S3ArtifactStore(
    { bucket, endpoint: s3.endpoint, region: s3.region, forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } },
    logger,
  );
  try {
    await store.init();
    expect(store.lifecycle).toBe('unsupported');
    expect(lines.filter((line) => line.includes('no lifecycle rules'))).toHaveLength(1);
    const body = randomBytes(1024);
    await store.put('a/b', Readable.from([body]), body.length);
    expect(await store.exists('a/b')).toBe(true);
  } finally {
    store.destroy();
  }
});
