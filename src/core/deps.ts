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
import type { IssuerKeys } from '../oidc/issuer-keys';
import type { ArtifactStore } from '../storage/artifact-store';

/** Process-wide dependencies, built once at start (src/bootstrap.ts) and shared by every request. */
export interface Deps {
  config: Config;
  clock: Clock;
  logger: Logger;
  mongo: MongoClient;
  db: Db;
  repos: Repositories;
  signingKeys: SigningKeys;
  limiter: RateLimiter;
  redis: Redis | null;
  cursors: CursorCodec;
  /** Key of the HMAC that device ids are stored under (they are never stored in clear). */
  deviceIdKey: Buffer;
  /** The OIDC issuer's signing keys (discovery + JWKS), cached in memory. */
  oidcKeys: IssuerKeys;
  /** Artifact bytes: the filesystem or S3 (ARTIFACT_STORE). */
  artifacts: ArtifactStore;
  /** The one executable schema: /graphql serves it, the REST facade executes documents against it in-process. */
  schema: GraphQLSchema;
}

/**
 * State an instance keeps in memory beside its dependencies (uploads and exports in flight, addresses refused): one
 * per set of dependencies, made on first use. One per process in production, one per test harness.
 */
export function perInstance<T>(make: (deps: Deps) => T): (deps: Deps) => T {
  const made = new WeakMap<Deps, T>();
  return (deps) => {
    let value = made.get(deps);
    if (value === undefined) made.set(deps, (value = make(deps)));
    return value;
  };
}
