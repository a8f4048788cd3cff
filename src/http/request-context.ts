import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Deps } from '../core/deps';
import type { Logger } from '../core/logger';
import type { RequestState } from './request-state';

export const API_VERSION = '1.0.0';
const INCOMING_ID = /^[A-Za-z0-9._-]{8,64}$/;

/**
 * A request's state. Its logger (the service's logger as it was when the request arrived, bound to the request id)
 * is made when first used: most requests log nothing but their access line, which the base logger writes.
 */
class State implements RequestState {
  declare op: RequestState['op'];
  declare principal: RequestState['principal'];
  declare authFailed: RequestState['authFailed'];
  declare ctx: RequestState['ctx'];
  private child: Logger | undefined;

  constructor(
    readonly requestId: string,
    private readonly base: Logger,
    readonly checkContract: boolean,
  ) {}

  get logger(): Logger {
    return (this.child ??= this.base.child({ requestId: this.requestId }));
  }
}

/** Gives every request an id, a logger and the version header (its access-log line: src/http/access-log.ts). */
export function requestContext(deps: Deps): RequestHandler {
  return (req, res, next) => {
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && INCOMING_ID.test(incoming) ? incoming : randomUUID();
    res.locals.shieldgate = new State(requestId, deps.logger, deps.config.validateResponses);
    res.setHeader('Service-Api-Version', API_VERSION);
    res.setHeader('X-Request-Id', requestId);
    // Answers carry upload URLs, access tokens, key secrets and staff tokens, and otherwise one tenant's data: no
    // shared or browser cache may keep any of them (an idempotent replay sets it again from here).
    res.setHeader('Cache-Control', 'no-store');
    next();
  };
}
