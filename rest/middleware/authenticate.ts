import type { RequestHandler } from 'express';
import type { Deps } from '../../src/core/deps';
import { authenticateApiRequest } from '../../src/auth/authenticate';
import { ANONYMOUS } from '../../src/auth/principal';
import { createContext } from '../../src/services/context';
import { buildProblem, sendProblem } from '../../src/http/problem';
import { requestState } from '../../src/http/request-state';

/**
 * Resolves the credential of a protected operation. A failure is not answered here: the rate limiter first counts
 * it against the client address (so guessing keys is throttled), then `rejectUnauthenticated` answers 401.
 */
export function authenticate(deps: Deps): RequestHandler {
  return async (req, res, next) => {
    const state = requestState(res);
    if (state.op?.isPublic) {
      state.principal = ANONYMOUS;
    } else {
      const result = await authenticateApiRequest(deps, req.get('authorization'));
      state.principal = result.ok ? result.principal : ANONYMOUS;
      state.authFailed = !result.ok;
    }
    state.ctx = createContext(deps, state.principal, state.requestId, () => state.logger);
    next();
  };
}

export const rejectUnauthenticated: RequestHandler = (req, res, next) => {
  const state = requestState(res);
  if (!state.authFailed) return next();
  // One answer for every kind of failure: missing, malformed, unknown, revoked, expired.
  res.setHeader('WWW-Authenticate', 'Bearer realm="shieldgate"');
  sendProblem(req, res, buildProblem('unauthorized', state.requestId, { detail: 'A valid credential is required.' }));
};
