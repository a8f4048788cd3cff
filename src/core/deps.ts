import type { MongoClient, Db } from 'mongodb';
import type { Config } from './config';
import type { Clock } from './clock';
import type { Logger } from './logger';
import type { Repositories } from '../data/repositories';
import type { SigningKeys } from '../crypto/signing-keys';
import type { RateLimiter } from '../rate-limit/rate-limiter';
import type Redis from 'ioredis';
import type { CursorCodec } from '../crypto/cursors';
import type { GraphQLSchema } from 'graphql';
import type { IssuerKeyRegistry } from '../oidc/issuer-key-registry';
import type { ClaimDrift } from '../oidc/claim-drift';
import type { ArtifactStore } from '../storage/artifact-store';
import type { InstanceUploads } from '../uploads/upload-budget';
import type { FailedUploadTokens } from '../uploads/failed-upload-tokens';
import type { RunningExports } from '../threats/export-budget';
import type { WindowCache } from '../threats/window-cache';
import type { WebhookCache } from '../webhooks/webhook-cache';
import type { AppCache } from '../auth/app-cache';
import type { ScanWorkers } from '../scan/worker/analyze-in-worker';
import type { AttestTrust } from '../attest/trust/trust-store';
import type { AttestConfigCache } from '../attest/state/config-cache';
import type { AttestFactsCache } from '../attest/state/facts-cache';
import type { VerdictTally } from '../attest/state/verdict-tally';

/**
 * What one instance keeps in memory beside its dependencies, made with them (src/bootstrap.ts): one set per process
 * in production, one per test harness. Never shared between instances, so nothing here may decide what N instances
 * must decide as one (docs/architecture.md, "State shared between instances").
 */
export interface InstanceState {
  /** Uploads in flight on this instance (UPLOADS_PER_INSTANCE). */
  uploads: InstanceUploads;
  /** Client addresses refused without a look after too many failed upload URLs. */
  failedUploadTokens: FailedUploadTokens;
  /** NDJSON threat exports running on this instance, per app and in all. */
  exports: RunningExports;
  /** The apps of authenticated API keys, remembered for half a minute. */
  apps: AppCache;
  /** Threat windows opened or read recently, per merge key, so a repeated event needs no read. */
  windows: WindowCache;
  /** Each app's webhooks, remembered for a few seconds. */
  webhooks: WebhookCache;
  /** Each app's attestation configuration, its Play Integrity keys opened, remembered for a few seconds. */
  attestConfigs: AttestConfigCache;
  /** Recorded signers and version-code builds that verifications found, remembered for a few seconds. */
  attestFacts: AttestFactsCache;
  /** The attestation verdicts given lately, added to the dashboard's counts a second later. */
  verdictTally: VerdictTally;
  /** Claims CI providers sent that their models do not know, logged once a day. */
  claimDrift: ClaimDrift;
  /** The analysis workers of this instance's scan jobs (SCAN_WORKERS at most), shared by every runner it starts. */
  scanWorkers: ScanWorkers;
}

/** Process-wide dependencies, built once at start (src/bootstrap.ts) and shared by every request. */
export interface Deps {
  config: Config;
  clock: Clock;
  logger: Logger;
  mongo: MongoClient;
  db: Db;
  repos: Repositories;
  signingKeys: SigningKeys;
  /** The keys that sign attestation verdict tokens (their own set: GET /v1/attest/jwks, `shieldgate attest-key rotate`). */
  attestKeys: SigningKeys;
  /** Device attestation's roots and revocation list, read at start. */
  attestTrust: AttestTrust;
  limiter: RateLimiter;
  redis: Redis | null;
  cursors: CursorCodec;
  /** Key of the HMAC that device ids are stored under (they are never stored in clear). */
  deviceIdKey: Buffer;
  /** Each OIDC issuer's signing keys (discovery + JWKS), cached in memory, one set per issuer. */
  oidcKeys: IssuerKeyRegistry;
  /** Artifact bytes: the filesystem or S3 (ARTIFACT_STORE). */
  artifacts: ArtifactStore;
  /** The one executable schema: /graphql serves it, the REST facade executes documents against it in-process. */
  schema: GraphQLSchema;
  /** This instance's own state in memory. */
  instance: InstanceState;
}
