import type { RequestHandler } from 'express';
import { HeaderMap } from '@apollo/server';
import { GraphQLError } from 'graphql';
import type { Deps } from '../core/deps';
import { authenticateStaff } from '../auth/authenticate';
import type { StaffPrincipal } from '../auth/principal';
import { addressKey } from '../rate-limit/client-address';
import type { RateDecision } from '../rate-limit/rate-limiter';
import { STAFF_PRINCIPAL } from '../http/request-state';

/** RateLimit-* of the bucket that decided last: the request count, then (staff) the cost budget. */
function rateHeaders(decision: RateDecision): [string, string][] {
  return [
    ['RateLimit-Limit', String(decision.limit)],
    ['RateLimit-Remaining', String(decision.remaining)],
    ['RateLimit-Reset', String(decision.resetSeconds)],
  ];
}

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
 * (the Sandbox page; an operation in a GET is refused there as unauthenticated). A staff token's request count only
 * stops floods: what its operations may cost is spendStaffCost's, once they are parsed and costed.
 */
export function graphqlGate(deps: Deps): RequestHandler {
  return async (req, res, next) => {
    try {
      const principal = await authenticateStaff(deps, req.get('authorization'));
      const bucket = principal?.kind === 'staff' ? { key: `gql-staff:${principal.staffId}`, limit: deps.config.graphqlStaffLimit } : { key: `gql-ip:${addressKey(req.ip ?? 'unknown')}`, limit: deps.config.graphqlAnonymousLimit };
      const decision = await deps.limiter.consume(bucket.key, bucket.limit);
      for (const [name, value] of rateHeaders(decision)) res.setHeader(name, value);
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

/**
 * A staff token's cost budget (GRAPHQL_STAFF_COST_PER_MINUTE per 60 s, bucket `gql-cost:<staffId>`), spent by each
 * operation's cost once it is known (parsed, validated, under MAX_COST) and before it runs: the request count lets 600
 * operations a minute through, and one that runs 9 dashboard aggregates reads up to 1.8 million rows. Past the budget,
 * 429 `rate_limited` with Retry-After, nothing run and nothing spent. The response's RateLimit-* headers then describe
 * the budget, so the client sees what the operation cost.
 */
export async function spendStaffCost(deps: Pick<Deps, 'limiter' | 'config'>, staffId: string, cost: number, headers: HeaderMap): Promise<void> {
  const decision = await deps.limiter.consume(`gql-cost:${staffId}`, deps.config.graphqlStaffCostPerMinute, Math.max(1, cost));
  for (const [name, value] of rateHeaders(decision)) headers.set(name.toLowerCase(), value);
  if (decision.allowed) return;
  const retryAfter = Math.max(1, decision.resetSeconds);
  throw new GraphQLError(`Query cost budget of ${decision.limit} per 60 s reached: this operation costs ${cost}, ${decision.remaining} is left.`, {
    extensions: {
      code: 'rate_limited',
      retryAfter,
      http: { status: 429, headers: new HeaderMap([...rateHeaders(decision).map(([n, v]): [string, string] => [n.toLowerCase(), v]), ['retry-after', String(retryAfter)]]) },
    },
  });
}
