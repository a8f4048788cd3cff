/**
 * Starts the real HTTP app for one test file: its own database on the test bed's MongoDB-compatible server, a
 * manual clock, responses validated against the OpenAPI file. Factories create apps, keys and staff directly
 * through the services (the same code the operator CLI runs).
 */
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { loadConfig, type Config } from '../../src/core/config';
import { createDeps, closeDeps } from '../../src/bootstrap';
import { createHttpApp } from '../../src/app';
import { createHttpServer } from '../../src/http/server';
import { ManualClock } from '../../src/core/clock';
import { createLogger } from '../../src/core/logger';
import type { Deps } from '../../src/core/deps';
import { createApp } from '../../src/services/apps-service';
import { createApiKey, createStaff } from '../../src/services/keys-service';
import type { Scope } from '../../src/auth/scopes';
import { createJobRunner, type JobRunner } from '../../src/jobs';
import { operatorContext } from '../../src/services/operator-context';

export interface Harness {
  baseUrl: string;
  deps: Deps;
  clock: ManualClock;
  config: Config;
  /** fetch relative to the server, e.g. api('/v1/whoami', { headers }) */
  api(path: string, init?: RequestInit): Promise<Response>;
  newApp(plan?: string): Promise<{ appId: string }>;
  /** An API key; `releaseBuilds`: a release key, whose builds are release builds (docs/contract.md, "Release builds"). */
  newKey(appId: string, scopes: Scope[], mode?: 'live' | 'test', options?: { releaseBuilds?: boolean }): Promise<{ id: string; key: string }>;
  newStaff(role: 'support' | 'admin'): Promise<string>;
  /** The static-scan job runner (polling every 50 ms unless started with `jobs: false`). */
  jobs: JobRunner;
  close(): Promise<void>;
}

export interface HarnessOptions {
  env?: Record<string, string>;
  /** Start the clock here (default: now). */
  now?: Date;
  /** Start the job runner (default true); a test that drives jobs step by step passes false. */
  jobs?: boolean;
  /** Where the service's log lines go (default stdout): a test that reads its logs passes a collector. */
  logTo?: { write(line: string): void };
}

function requireEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the tests through jest (its global setup starts the test bed)`);
  return value;
}

export function testBedEnv(): Record<string, string> {
  return {
    MONGODB_URI: requireEnv('TEST_MONGODB_URI'),
    REDIS_URL: requireEnv('TEST_REDIS_URL'),
    S3_ENDPOINT: requireEnv('TEST_S3_ENDPOINT'),
    S3_REGION: process.env.TEST_S3_REGION ?? 'us-east-1',
  };
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const bed = testBedEnv();
  const dbName = `t_${randomBytes(6).toString('hex')}`;
  // The server's budgets (timeouts) come from the same settings; the port is known only once it listens.
  const server = createHttpServer(loadConfig({ ...bed, ...options.env }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const baseUrl = `http://127.0.0.1:${port}`;
  // No REDIS_URL by default: each harness counts on its own in-process limiter, so test files never share buckets.
  // Tests about shared limits pass `env: { REDIS_URL: testBedEnv().REDIS_URL }`.
  const config = loadConfig({
    MONGODB_URI: bed.MONGODB_URI,
    MONGODB_DATABASE: dbName,
    PORT: String(port),
    PUBLIC_BASE_URL: baseUrl,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    VALIDATE_RESPONSES: 'on',
    DATA_DIR: `/tmp/shieldgate-test-${dbName}`,
    ...options.env,
  });
  const clock = new ManualClock(options.now ?? new Date());
  // Command monitoring on, as connectMongo has it: the database latency metric is fed by its events.
  const mongo = new MongoClient(bed.MONGODB_URI, { monitorCommands: true });
  await mongo.connect();
  const deps = await createDeps(config, { clock, mongo, logger: createLogger(config.logLevel, options.logTo) });
  const { app, stop } = await createHttpApp(deps);
  server.on('request', app);
  const jobs = createJobRunner(deps);
  if (options.jobs !== false) jobs.start({ pollIntervalMs: 50 });

  return {
    baseUrl,
    deps,
    clock,
    config,
    api: (path, init) => fetch(`${baseUrl}${path}`, init),
    newApp: async (plan = 'startup') => ({ appId: (await createApp(operatorContext(deps), { name: 'test app', plan }))._id }),
    newKey: async (appId, scopes, mode = 'live', options = {}) => {
      const created = await createApiKey(operatorContext(deps), { appId, scopes, mode, releaseBuilds: options.releaseBuilds ?? false });
      return { id: created.doc._id, key: created.key };
    },
    newStaff: async (role) => (await createStaff(operatorContext(deps), role)).token,
    jobs,
    close: async () => {
      await jobs.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await stop();
      await deps.db.dropDatabase().catch(() => undefined);
      await closeDeps(deps, { closeMongo: false });
      await mongo.close();
    },
  };
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
export const json = (key: string) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });

/** A response body as JSON, typed loosely on purpose: tests assert its shape. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const readJson = (res: Response): Promise<any> => res.json();

/** Settings for the S3 store of the test bed, in a bucket of the test's own. */
export function s3StoreEnv(bucketPrefix: string): Record<string, string> {
  const env: Record<string, string> = {
    ARTIFACT_STORE: 's3',
    S3_BUCKET: `${bucketPrefix}-${randomBytes(4).toString('hex')}`,
    S3_ENDPOINT: process.env.TEST_S3_ENDPOINT ?? '',
    S3_REGION: process.env.TEST_S3_REGION ?? 'us-east-1',
  };
  const accessKeyId = process.env.TEST_S3_ACCESS_KEY_ID ?? process.env.AWS_ACCESS_KEY_ID;
  const secret = process.env.TEST_S3_SECRET_ACCESS_KEY ?? process.env.AWS_SECRET_ACCESS_KEY;
  if (accessKeyId && secret) Object.assign(env, { S3_ACCESS_KEY_ID: accessKeyId, S3_SECRET_ACCESS_KEY: secret });
  return env;
}
