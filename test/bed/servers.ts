/**
 * Real servers for the tests: redis-server from Debian, versitygw (S3 on a POSIX folder) and FerretDB on SQLite,
 * both built into .cache/bin by tools/install.sh. Each listens on a free loopback port and is ready when it
 * answers its own protocol, not merely when the port is open.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { ListBucketsCommand, S3Client } from '@aws-sdk/client-s3';
import { MongoClient } from 'mongodb';
import { findRepoRoot, freePort, startFerretDb } from '../../src/embedded/ferretdb';
import { ServerProcess } from './process';

const HOST = '127.0.0.1';

export interface RedisServer {
  url: string;
  port: number;
  stop(): Promise<void>;
  /** Starts again on the same port, empty (the test bed keeps no Redis data on disk). */
  restart(): Promise<void>;
}

export interface S3Server {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  /** The folder versitygw keeps buckets and objects in. */
  root: string;
  stop(): Promise<void>;
  /** Starts again on the same port over the same folder: buckets and objects survive. */
  restart(): Promise<void>;
}

export interface MongoServer {
  uri: string;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

export async function startRedis(): Promise<RedisServer> {
  const port = await freePort();
  const url = `redis://${HOST}:${port}`;
  const server = new ServerProcess({
    name: 'redis-server',
    command: 'redis-server',
    // No RDB snapshots nor AOF: nothing is written to disk, so a restart starts empty.
    args: ['--port', String(port), '--bind', HOST, '--save', '', '--appendonly', 'no'],
    port,
    ping: () => pingRedis(url),
  });
  await server.start();
  return { url, port, stop: () => server.stop(), restart: () => server.restart() };
}

/** `root`: the folder to keep objects in (the soak passes a small file system of its own); a fresh temporary one by default. */
export async function startS3(options: { root?: string } = {}): Promise<S3Server> {
  const port = await freePort();
  const root = options.root ?? temporaryDir('s3');
  const credentials = {
    accessKeyId: `test${randomBytes(4).toString('hex')}`,
    secretAccessKey: randomBytes(16).toString('hex'),
  };
  const region = 'us-east-1';
  const endpoint = `http://${HOST}:${port}`;
  const server = new ServerProcess({
    name: 'versitygw',
    command: versitygwBinary(),
    args: [
      '--port', `${HOST}:${port}`,
      '--access', credentials.accessKeyId,
      '--secret', credentials.secretAccessKey,
      '--region', region,
      // Request lines on stdout are noise in test output.
      '--quiet',
      'posix', root,
    ],
    port,
    ping: () => pingS3(endpoint, region, credentials),
  });
  await server.start();
  return { endpoint, ...credentials, region, root, stop: () => server.stop(), restart: () => server.restart() };
}

export async function startMongo(): Promise<MongoServer> {
  const ferret = await startFerretDb({ dataDir: temporaryDir('mongo') });
  try {
    await pingMongo(ferret.uri);
  } catch (error) {
    await ferret.stop();
    throw error;
  }
  return ferret;
}

async function pingRedis(url: string): Promise<void> {
  // One attempt, no reconnects: the caller retries until its deadline. A failed attempt leaves no 2 s timer behind.
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, disconnectTimeout: 50 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const reply = await client.ping();
    if (reply !== 'PONG') throw new Error(`redis answered ${reply} to PING`);
  } finally {
    client.disconnect();
  }
}

async function pingS3(
  endpoint: string,
  region: string,
  credentials: { accessKeyId: string; secretAccessKey: string },
): Promise<void> {
  const client = new S3Client({ endpoint, region, credentials, forcePathStyle: true, maxAttempts: 1 });
  try {
    await client.send(new ListBucketsCommand({}));
  } finally {
    client.destroy();
  }
}

async function pingMongo(uri: string): Promise<void> {
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 10_000 });
  try {
    await client.connect();
    await client.db('admin').command({ ping: 1 });
  } finally {
    await client.close();
  }
}

/** The pinned versitygw under .cache/bin, installed by tools/install.sh when missing. */
function versitygwBinary(): string {
  const root = findRepoRoot();
  const binary = path.join(root, '.cache', 'bin', 'versitygw');
  if (!existsSync(binary)) {
    const install = spawnSync('bash', [path.join(root, 'tools', 'install.sh')], { stdio: ['ignore', 'inherit', 'inherit'] });
    if (install.status !== 0 || !existsSync(binary)) throw new Error('tools/install.sh did not produce .cache/bin/versitygw');
  }
  return binary;
}

/** A fresh folder under the system temp dir, removed when this process exits (restart() still needs it). */
function temporaryDir(kind: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), `shieldgate-${kind}-`));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
