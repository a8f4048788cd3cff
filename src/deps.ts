import type { MongoClient, Db } from 'mongodb';
import type { Config } from './config';
import type { Clock } from './clock';
import type { Logger } from './logger';
import type { Repositories } from './data/repositories';
import type { SigningKeys } from './crypto/signing-keys';
import type { RateLimiter } from './rate-limit/rate-limiter';
import type Redis from 'ioredis';
import type { CursorCodec } from './crypto/cursors';
import type { GraphQLSchema } from 'graphql';

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
  /** The one executable schema: /graphql serves it, the REST facade executes documents against it in-process. */
  schema: GraphQLSchema;
}
