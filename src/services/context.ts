import { randomUUID } from 'node:crypto';
import type { Deps } from '../core/deps';
import type { Principal } from '../auth/principal';
import type { Logger } from '../core/logger';
import type { Clock } from '../core/clock';
import type { Repositories } from '../data/repositories';
import { createLoaders, type Loaders } from '../data/loaders';

/** One context per request, built the same way by the REST facade and by /graphql. */
export interface RequestContext {
  requestId: string;
  principal: Principal;
  logger: Logger;
  clock: Clock;
  repos: Repositories;
  deps: Deps;
  /** The GraphQL operation's computed cost, set by the query limits once known (the metrics read it). */
  graphqlCost?: number;
  /** Batched lookups for GraphQL field resolvers, made per request (src/data/loaders.ts). */
  loaders: Loaders;
}

/**
 * `logger` is the request's logger when the HTTP layer already has one (it carries the same request id), or how to
 * get it. The logger and the loaders are made when first used: most requests log nothing and resolve no list.
 */
export function createContext(deps: Deps, principal: Principal, requestId: string = randomUUID(), logger?: Logger | (() => Logger)): RequestContext {
  let ownLogger: Logger | undefined = typeof logger === 'function' ? undefined : logger;
  let loaders: Loaders | undefined;
  return {
    requestId,
    principal,
    get logger(): Logger {
      return (ownLogger ??= typeof logger === 'function' ? logger() : deps.logger.child({ requestId }));
    },
    clock: deps.clock,
    repos: deps.repos,
    deps,
    get loaders(): Loaders {
      return (loaders ??= createLoaders(deps.repos));
    },
  };
}
