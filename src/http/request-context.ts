import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Deps } from '../core/deps';
import type { RequestState } from './request-state';

export const API_VERSION = '1.0.0';
const INCOMING_ID = /^[A-Za-z0-9._-]{8,64}$/;

/** Gives every request an id, a child logger and the version header (its access-log line: src/http/access-log.ts). */
export function requestContext(deps: Deps): RequestHandler {
  return (req, res, next) => {
    const incoming = req.get('x-request-id');
    const requestId = incoming && INCOMING_ID.test(incoming) ? incoming : randomUUID();
    const state: RequestState = { requestId, logger: deps.logger.child({ requestId }), checkContract: deps.config.validateResponses };
    res.locals.shieldgate = state;
    res.setHeader('Service-Api-Version', API_VERSION);
    res.setHeader('X-Request-Id', requestId);
    // Answers carry upload URLs, access tokens, key secrets and staff tokens, and otherwise one tenant's data: no
    // shared or browser cache may keep any of them (an idempotent replay sets it again from here).
    res.setHeader('Cache-Control', 'no-store');
    next();
  };
}
