import type { RequestHandler } from 'express';
import { matchRoute, type OperationInfo } from '../support/spec';
import { buildProblem, sendProblem } from '../../src/http/problem';
import { requestState } from '../../src/http/request-state';

/** Finds the contract's operation for the request: unknown path 404, known path with another method 405. */
export function route(table: OperationInfo[]): RequestHandler {
  return (req, res, next) => {
    const state = requestState(res);
    const match = matchRoute(table, req.method, req.path);
    if (match.kind === 'not_found') {
      sendProblem(req, res, buildProblem('not_found', state.requestId, { detail: 'No operation at this path.' }));
      return;
    }
    if (match.kind === 'method_not_allowed') {
      res.setHeader('Allow', match.allow.join(', '));
      sendProblem(req, res, buildProblem('method_not_allowed', state.requestId, { detail: `Allowed: ${match.allow.join(', ')}.` }));
      return;
    }
    state.op = match.op;
    next();
  };
}
