import { randomUUID } from 'node:crypto';
import type { Deps } from '../core/deps';
import type { Principal } from '../auth/principal';
import type { Logger } from '../core/logger';
import type { Clock } from '../core/clock';
import type { Repositories } from '../data/repositories';
import { contextCreated } from '../metrics/graphql';
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

/** `logger` is the request's logger when the HTTP layer already made one (it carries the same request id). */
export function createContext(deps: Deps, principal: Principal, requestId: string = randomUUID(), logger?: Logger): RequestContext {
  const context: RequestContext = {
    requestId,
    principal,
    logger: logger ?? deps.logger.child({ requestId }),
    clock: deps.clock,
    repos: deps.repos,
    deps,
    loaders: createLoaders(deps.repos),
  };
  contextCreated(logger, context); // lets /graphql's metrics read the operation's cost once it is computed
  return context;
}
