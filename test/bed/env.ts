/**
 * What a test file needs of the test bed that global-setup.ts started: addresses and credentials, one database
 * per test file, buckets.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { MongoClient } from 'mongodb';

export interface TestBed {
  mongodbUri: string;
  redisUrl: string;
  s3: { endpoint: string; accessKeyId: string; secretAccessKey: string; region: string };
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the tests through jest (its global setup starts the test bed)`);
  return value;
}

export function testBed(): TestBed {
  return {
    mongodbUri: required('TEST_MONGODB_URI'),
    redisUrl: required('TEST_REDIS_URL'),
    s3: {
      endpoint: required('TEST_S3_ENDPOINT'),
      accessKeyId: process.env.TEST_S3_ACCESS_KEY_ID ?? '',
      secretAccessKey: process.env.TEST_S3_SECRET_ACCESS_KEY ?? '',
      region: process.env.TEST_S3_REGION ?? 'us-east-1',
    },
  };
}

/**
 * A database name of its own for one test file (pass __filename), e.g. `t_uploads_3f9a0c1b`: test files run in
 * parallel on one server and must not see each other's documents. Kept to FerretDB's name rules
 * (letters, digits, `_`, at most 63 characters).
 */
export function testDatabaseName(testFile: string): string {
  const base = path
    .basename(testFile)
    .replace(/\.test\.[cm]?[jt]s$/, '')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .slice(0, 40);
  return `t_${base}_${randomBytes(4).toString('hex')}`;
}

/** An S3 client for the test bed's server (path-style: the server has no per-bucket host names). */
export function testS3Client(): S3Client {
  const { s3 } = testBed();
  return new S3Client({
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
  });
}

/** Creates the bucket on the test bed's S3 server; one that this account already owns is fine. */
export async function createBucket(name: string): Promise<string> {
  const client = testS3Client();
  try {
    await client.send(new CreateBucketCommand({ Bucket: name }));
  } catch (error) {
    if ((error as { name?: string }).name !== 'BucketAlreadyOwnedByYou') throw error;
  } finally {
    client.destroy();
  }
  return name;
}

export async function dropDatabase(name: string): Promise<void> {
  const client = new MongoClient(testBed().mongodbUri);
  try {
    await client.connect();
    await client.db(name).dropDatabase();
  } finally {
    await client.close();
  }
}
