import { randomUUID } from 'node:crypto';
import type { Deps } from './deps';
import type { Principal } from './auth/principal';
import type { Logger } from './logger';
import type { Clock } from './clock';
import type { Repositories } from './data/repositories';

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
}

/** `logger` is the request's logger when the HTTP layer already made one (it carries the same request id). */
export function createContext(deps: Deps, principal: Principal, requestId: string = randomUUID(), logger?: Logger): RequestContext {
  return {
    requestId,
    principal,
    logger: logger ?? deps.logger.child({ requestId }),
    clock: deps.clock,
    repos: deps.repos,
    deps,
  };
}
