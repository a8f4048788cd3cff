// Protects: the test bed itself (docs/architecture.md, "Embedded default and real services"): integration tests run
// against real MongoDB-compatible, Redis and S3-compatible servers, and a dedicated Redis or S3 server can be
// stopped and restarted on the same address to test outages.
import Redis from 'ioredis';
import { CreateBucketCommand, GetObjectCommand, ListBucketsCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { MongoClient } from 'mongodb';
import { startRedis, startS3 } from '../bed/servers';
import { createBucket, dropDatabase, testBed, testDatabaseName, testS3Client } from '../bed/env';

describe('the shared servers of the test bed', () => {
  it('stores and reads a document in MongoDB, in a database of this file', async () => {
    const name = testDatabaseName(__filename);
    expect(name).toMatch(/^t_test_bed_[0-9a-f]{8}$/);
    const client = new MongoClient(testBed().mongodbUri);
    try {
      await client.connect();
      const things = client.db(name).collection<{ _id: string; n: number }>('things');
      await things.insertOne({ _id: 'a', n: 1 });
      await things.updateOne({ _id: 'a' }, { $inc: { n: 1 } });
      expect(await things.findOne({ _id: 'a' })).toEqual({ _id: 'a', n: 2 });
      await expect(things.insertOne({ _id: 'a', n: 3 })).rejects.toMatchObject({ code: 11000 });
    } finally {
      await dropDatabase(name);
      await client.close();
    }
  });

  it('counts in Redis', async () => {
    const redis = new Redis(testBed().redisUrl);
    try {
      const key = `test-bed:${Date.now()}:${Math.random()}`;
      expect(await redis.incr(key)).toBe(1);
      expect(await redis.incr(key)).toBe(2);
      await redis.del(key);
    } finally {
      redis.disconnect();
    }
  });

  it('puts and gets an object in S3', async () => {
    const bucket = await createBucket(`test-bed-${Date.now()}`);
    const s3 = testS3Client();
    try {
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'dir/hello.txt', Body: 'hello', ContentType: 'text/plain' }));
      const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'dir/hello.txt' }));
      expect(got.ContentType).toBe('text/plain');
      expect(await got.Body?.transformToString()).toBe('hello');
    } finally {
      s3.destroy();
    }
  });
});

describe('dedicated servers for outage tests', () => {
  it('stops and restarts Redis on the same address', async () => {
    const server = await startRedis();
    // No retries: each command shows the state of the server at that moment. A short disconnectTimeout: ioredis
    // otherwise keeps a 2 s timer for a connection that never opened, and the test file cannot exit before it fires.
    const connect = () =>
      new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, disconnectTimeout: 50 }).on(
        'error',
        () => undefined,
      );
    try {
      const before = connect();
      await before.connect();
      expect(await before.incr('n')).toBe(1);
      before.disconnect();

      await server.stop();
      const during = connect();
      await expect(during.connect().then(() => during.incr('n'))).rejects.toThrow();
      during.disconnect();

      await server.restart();
      const after = connect();
      await after.connect();
      // Nothing is persisted: a restarted Redis starts empty.
      expect(await after.incr('n')).toBe(1);
      after.disconnect();
    } finally {
      await server.stop();
    }
  });

  it('stops and restarts S3 on the same address, keeping its objects', async () => {
    const server = await startS3();
    const s3 = new S3Client({
      endpoint: server.endpoint,
      region: server.region,
      forcePathStyle: true,
      credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
      maxAttempts: 1,
    });
    try {
      // A dedicated server starts with no bucket at all.
      expect((await s3.send(new ListBucketsCommand({}))).Buckets ?? []).toEqual([]);
      await s3.send(new CreateBucketCommand({ Bucket: 'outage' }));
      await s3.send(new PutObjectCommand({ Bucket: 'outage', Key: 'k', Body: 'v' }));

      await server.stop();
      await expect(s3.send(new GetObjectCommand({ Bucket: 'outage', Key: 'k' }))).rejects.toThrow();

      await server.restart();
      const got = await s3.send(new GetObjectCommand({ Bucket: 'outage', Key: 'k' }));
      expect(await got.Body?.transformToString()).toBe('v');
    } finally {
      s3.destroy();
      await server.stop();
    }
  });
});
