import type { RequestHandler } from 'express';
import type { Deps } from '../../src/core/deps';
import { ANONYMOUS_LIMIT, PLAN_LIMITS } from '../../src/rate-limit/plans';
import type { Principal } from '../../src/auth/principal';
import { buildProblem, sendProblem } from '../../src/http/problem';
import { requestState } from '../../src/http/request-state';
import { addressKey } from '../../src/rate-limit/client-address';

/**
 * The bucket a request counts against, and its limit (docs/contract.md, "Rate limits"). The client address is asked
 * for only when it names the bucket (`req.ip` reads the forwarding headers the proxy settings trust, each time).
 */
export function bucketFor(principal: Principal | undefined, clientAddress: () => string): { bucket: string; limit: number } {
  switch (principal?.kind) {
    case 'api_key':
      return { bucket: `key:${principal.keyId}`, limit: PLAN_LIMITS[principal.plan] };
    case 'oidc':
      return { bucket: `rule:${principal.bucketRuleId}`, limit: PLAN_LIMITS[principal.plan] };
    default:
      return { bucket: `ip:${addressKey(clientAddress())}`, limit: ANONYMOUS_LIMIT };
  }
}

/** Counts the request and sets the RateLimit headers on every metered operation's response, errors included. */
export function rateLimit(deps: Deps): RequestHandler {
  return async (req, res, next) => {
    const state = requestState(res);
    if (!state.op?.metered) return next();
    const { bucket, limit } = bucketFor(state.principal, () => req.ip ?? 'unknown');
    const decision = await deps.limiter.consume(bucket, limit);
    res.setHeader('RateLimit-Limit', String(decision.limit));
    res.setHeader('RateLimit-Remaining', String(decision.remaining));
    res.setHeader('RateLimit-Reset', String(decision.resetSeconds));
    if (decision.allowed) return next();
    const retryAfter = Math.max(1, decision.resetSeconds);
    sendProblem(req, res, buildProblem('rate_limited', state.requestId, { detail: `Rate limit of ${decision.limit} requests per 60 s reached.`, retryAfter }));
  };
}
