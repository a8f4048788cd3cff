import type { RequestHandler } from 'express';
import type { Deps } from '../core/deps';
import { authenticateStaff } from '../auth/authenticate';
import type { StaffPrincipal } from '../auth/principal';
import { addressKey } from '../rate-limit/client-address';
import { STAFF_PRINCIPAL } from '../http/request-state';

function refuse(res: Parameters<RequestHandler>[1], status: 401 | 429, message: string, retryAfter?: number): void {
  // The body is not read: the connection closes after the answer rather than draining whatever the client sends.
  res.setHeader('Connection', 'close');
  if (status === 401) res.setHeader('WWW-Authenticate', 'Bearer realm="shieldgate"');
  if (retryAfter !== undefined) res.setHeader('Retry-After', String(retryAfter));
  const code = status === 401 ? 'unauthorized' : 'rate_limited';
  res.status(status).type('application/json').send(JSON.stringify({ errors: [{ message, extensions: { code, ...(retryAfter ? { retryAfter } : {}) } }] }));
}

/**
 * /graphql before any body is read: the staff token is checked, and the request counted against the token's bucket
 * or, without a valid token, against the client address. An unauthenticated POST is answered 401 without its body
 * being parsed, so a flood of large bodies costs the instance headers only. A GET without a token goes on to Apollo
 * (the Sandbox page; an operation in a GET is refused there as unauthenticated).
 */
export function graphqlGate(deps: Deps): RequestHandler {
  return async (req, res, next) => {
    try {
      const principal = await authenticateStaff(deps, req.get('authorization'));
      const bucket = principal?.kind === 'staff' ? { key: `gql-staff:${principal.staffId}`, limit: deps.config.graphqlStaffLimit } : { key: `gql-ip:${addressKey(req.ip ?? 'unknown')}`, limit: deps.config.graphqlAnonymousLimit };
      const decision = await deps.limiter.consume(bucket.key, bucket.limit);
      res.setHeader('RateLimit-Limit', String(decision.limit));
      res.setHeader('RateLimit-Remaining', String(decision.remaining));
      res.setHeader('RateLimit-Reset', String(decision.resetSeconds));
      if (!decision.allowed) return refuse(res, 429, `Rate limit of ${decision.limit} requests per 60 s reached.`, Math.max(1, decision.resetSeconds));
      if (!principal) {
        if (req.method === 'GET' || req.method === 'HEAD') return next();
        return refuse(res, 401, 'A staff token is required.');
      }
      res.locals[STAFF_PRINCIPAL] = principal as StaffPrincipal;
      next();
    } catch (error) {
      next(error);
    }
  };
}
