import type { Request, Response } from 'express';
import { ERROR_STATUS, ERROR_TITLES, type ErrorCode, type FieldError } from '../src/errors';

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

export function sendProblem(req: Request, res: Response, problem: Problem): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (problem.retryAfter !== undefined) res.setHeader('Retry-After', String(problem.retryAfter));
  res.status(problem.status).type('application/problem+json').send(JSON.stringify(problem));
}
