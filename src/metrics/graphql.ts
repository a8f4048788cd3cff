import type { RequestHandler } from 'express';
import { metrics } from './registry';
import { graphqlOperationOf } from '../http/operation';
import { onRequestEnd } from './request-end';
import { requestState } from '../http/request-state';

export type GraphqlOutcome = 'ok' | 'error' | 'invalid' | 'refused' | 'failed' | 'aborted';

/**
 * The outcome of a GraphQL answer from its status and body. Apollo writes `errors` first in every JSON result
 * (`orderExecutionResultFields`), so a 200 body that starts with it carries errors: no need to parse the answer.
 */
export function graphqlOutcome(status: number, body: string | undefined, aborted: boolean): GraphqlOutcome {
  if (aborted) return 'aborted';
  if (status >= 500) return 'failed';
  if (status === 401 || status === 403) return 'refused';
  if (status >= 400) return 'invalid';
  return body?.startsWith('{"errors":') ? 'error' : 'ok';
}

/**
 * Counts /graphql operations by name and outcome, and records their cost when the query limits computed one (on the
 * request's context, which the GraphQL layer keeps on the request state). Only requests that reached the GraphQL
 * server count: one the gate refused before reading it (401, 429) names no operation, and the HTTP metrics count it.
 * A GET without a query (the Sandbox page) is no operation either.
 */
export function graphqlMetrics(): RequestHandler {
  return (req, res, next) => {
    let body: string | undefined;
    const send = res.send.bind(res);
    res.send = (chunk?: unknown) => {
      if (typeof chunk === 'string') body = chunk.slice(0, 16);
      return send(chunk);
    };
    onRequestEnd(res, (aborted) => {
      if (!('body' in req)) return; // refused by the gate before the body was read
      if (req.method === 'GET' && typeof req.query?.query !== 'string' && typeof req.query?.extensions !== 'string') return;
      const operation = graphqlOperationOf(req, res);
      metrics.graphqlOperations.inc({ operation, outcome: graphqlOutcome(res.statusCode, body, aborted) });
      const cost = requestState(res)?.ctx?.graphqlCost;
      if (typeof cost === 'number' && Number.isFinite(cost)) metrics.graphqlCost.observe({ operation }, cost);
    });
    next();
  };
}
