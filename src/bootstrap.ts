import Redis from 'ioredis';
import type { MongoClient } from 'mongodb';
import type { Config } from './core/config';
import type { Deps } from './core/deps';
import { systemClock, type Clock } from './core/clock';
import { createLogger, type Logger } from './core/logger';
import { connectMongo } from './data/db';
import { createRepositories, ensureAllIndexes } from './data/repositories';
import { SigningKeys } from './crypto/signing-keys';
import { ScanWorkers } from './scan/worker/analyze-in-worker';
import { FlexibleRateLimiter } from './rate-limit/rate-limiter';
import { loadServiceSecret } from './crypto/service-secrets';
import { loadAttestTrust } from './attest/trust/trust-store';
import { CursorCodec } from './crypto/cursors';
import { buildSchema } from './graphql/schema';
import { IssuerKeyRegistry } from './oidc/issuer-key-registry';
import { DEFAULT_ISSUERS } from './oidc/issuers';
import { ClaimDrift } from './oidc/claim-drift';
import { createArtifactStore } from './storage';
import { observeMongoCommands } from './metrics';
import { InstanceUploads } from './uploads/upload-budget';
import { FailedUploadTokens } from './uploads/failed-upload-tokens';
import { RunningExports } from './threats/export-budget';
import { WindowCache } from './threats/window-cache';
import { WebhookCache } from './webhooks/webhook-cache';
import { AttestConfigCache } from './attest/state/config-cache';
import { AttestFactsCache } from './attest/state/facts-cache';
import { VerdictTally } from './attest/state/verdict-tally';
import { AppCache } from './auth/app-cache';

export interface DepsOptions {
  clock?: Clock;
  logger?: Logger;
  mongo?: MongoClient; // tests share one client across many databases
}

function connectRedis(url: string, logger: Logger): Redis {
  const redis = new Redis(url, {
    // Fail fast while disconnected: the limiter then answers from memory instead of queueing requests.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000), // keep reconnecting, forever
  });
  let down = false;
  redis.on('error', (err) => {
    if (!down) logger.warn({ err: { message: err.message } }, 'redis unavailable; rate limits fall back to memory');
    down = true;
  });
  redis.on('ready', () => {
    if (down) logger.info('redis back; rate limits shared again');
    down = false;
  });
  return redis;
}

/** Gives Redis a moment to connect at start, so the first requests already share counters; never blocks start-up. */
async function redisReady(redis: Redis, timeoutMs: number): Promise<void> {
  if (redis.status === 'ready') return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(done, timeoutMs);
    redis.once('ready', done);
    function done() {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    }
  });
}

/**
 * How long an instance signs attestation verdicts with the key it last read: one read per verification was a fifth
 * of its database commands. A rotation reaches every instance within this time (docs/attestation.md).
 */
const ATTEST_KEY_CACHE_MS = 5_000;

/** Builds the process-wide dependencies: database, repositories (indexes ensured), keys, limiter, schema. */
export async function createDeps(config: Config, options: DepsOptions = {}): Promise<Deps> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const clock = options.clock ?? systemClock;
  if (!config.mongodbUri && !options.mongo) throw new Error('createDeps needs a MongoDB URI (main.ts starts the embedded one)');
  const mongo = options.mongo ?? (await connectMongo(config.mongodbUri!));
  observeMongoCommands(mongo);
  const db = mongo.db(config.mongodbDatabase);
  const repos = createRepositories(db);
  await ensureAllIndexes(repos);
  const redis = config.redisUrl ? connectRedis(config.redisUrl, logger) : null;
  if (redis) await redisReady(redis, 3000);
  const signingKeys = new SigningKeys(repos.signingKeys, clock, config.publicBaseUrl, config.keyEncryptionKey);
  const attestKeys = new SigningKeys(repos.attestSigningKeys, clock, config.publicBaseUrl, config.keyEncryptionKey, { kidPrefix: 'ak', rotateCommand: 'attest-key rotate', activeKeyCacheMs: ATTEST_KEY_CACHE_MS });
  const artifacts = createArtifactStore(config, logger);
  // A store that is down at start must not keep the service from starting: uploads answer 503 until it is back.
  await artifacts.init().catch((err) => logger.warn({ err: { message: err.message } }, 'artifact store not ready yet'));
  const limiter = new FlexibleRateLimiter(redis, logger);
  return {
    config,
    clock,
    logger,
    mongo,
    db,
    repos,
    signingKeys,
    attestKeys,
    attestTrust: loadAttestTrust(config.attest),
    limiter,
    redis,
    cursors: new CursorCodec(await loadServiceSecret(db, 'cursor-mac', config.keyEncryptionKey)),
    deviceIdKey: await loadServiceSecret(db, 'device-id', config.keyEncryptionKey),
    oidcKeys: new IssuerKeyRegistry(clock, [config.oidcIssuer, ...Object.values(DEFAULT_ISSUERS), ...config.oidcAllowedIssuers]),
    artifacts,
    schema: buildSchema(),
    instance: {
      uploads: new InstanceUploads(config.uploadsPerInstance),
      failedUploadTokens: new FailedUploadTokens(limiter),
      exports: new RunningExports(),
      apps: new AppCache(),
      windows: new WindowCache(),
      webhooks: new WebhookCache(),
      attestConfigs: new AttestConfigCache(),
      attestFacts: new AttestFactsCache(),
      verdictTally: new VerdictTally(repos.attestVerdictCounts, logger),
      claimDrift: new ClaimDrift(),
      scanWorkers: new ScanWorkers(config.scanIsolation),
    },
  };
}

export async function closeDeps(deps: Deps, opts: { closeMongo: boolean } = { closeMongo: true }): Promise<void> {
  await deps.instance.verdictTally.flush();
  deps.redis?.disconnect();
  if (opts.closeMongo) await deps.mongo.close();
}
