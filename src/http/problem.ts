import type { Request, Response } from 'express';
import { ERROR_STATUS, ERROR_TITLES, type ErrorCode, type FieldError } from '../core/errors';
import type { RequestState } from './request-state';

export const PROBLEM_TYPE_BASE = 'https://shieldgate.dev/problems/';

export interface Problem {
  type: string;
  title: string;
  status: number;
  code: ErrorCode;
  detail: string;
  instance: string;
  errors?: FieldError[];
  retryAfter?: number;
}

export function buildProblem(
  code: ErrorCode,
  requestId: string,
  opts: { status?: number; detail?: string; errors?: FieldError[]; retryAfter?: number } = {},
): Problem {
  const problem: Problem = {
    type: `${PROBLEM_TYPE_BASE}${code}`,
    title: ERROR_TITLES[code],
    status: opts.status ?? ERROR_STATUS[code],
    code,
    detail: opts.detail ?? ERROR_TITLES[code],
    // The occurrence, not the path: a path may carry a credential (upload tokens).
    instance: `urn:shieldgate:request:${requestId}`,
  };
  if (opts.errors?.length) problem.errors = opts.errors;
  if (opts.retryAfter !== undefined) problem.retryAfter = opts.retryAfter;
  return problem;
}

/**
 * With VALIDATE_RESPONSES (on in tests), a status the operation does not list becomes a 500 that names the breach:
 * express-openapi-validator checks the JSON bodies handlers send, this checks the problems every layer sends.
 */
function keepToContract(res: Response, problem: Problem): Problem {
  const state = res.locals.shieldgate as RequestState | undefined;
  const op = state?.op;
  if (!state?.checkContract || !op || op.statuses.has(problem.status) || problem.status === 500 || problem.status === 503) return problem;
  state.logger.error({ operationId: op.operationId, status: problem.status, code: problem.code }, 'contract violation: status not listed');
  return buildProblem('internal_error', state.requestId, { detail: `contract violation: ${op.operationId} lists no ${problem.status} (${problem.code})` });
}

export function sendProblem(req: Request, res: Response, problem: Problem): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  problem = keepToContract(res, problem);
  if (problem.retryAfter !== undefined) res.setHeader('Retry-After', String(problem.retryAfter));
  res.status(problem.status).type('application/problem+json').send(JSON.stringify(problem));
}
