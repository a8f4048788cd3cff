import type { ErrorRequestHandler, Request } from 'express';
import { isDomainError, type FieldError } from '../../src/core/errors';
import { buildProblem, sendProblem, type Problem } from '../../src/http/problem';
import type { OperationInfo } from '../support/spec';
import { requestState } from '../../src/http/request-state';
import { describeLimit } from '../../src/http/json-body';

interface ValidatorError {
  status: number;
  message?: string;
  errors?: Array<{ path?: string; message?: string; errorCode?: string }>;
}

function isValidatorError(error: unknown): error is ValidatorError {
  return typeof error === 'object' && error !== null && typeof (error as ValidatorError).status === 'number' && Array.isArray((error as ValidatorError).errors);
}

/** "/body/artifact/sha256" -> "/artifact/sha256"; query, path and header fields keep their location. */
function toPointer(path: string | undefined): string {
  if (!path) return '';
  if (path.startsWith('/body')) return path.slice('/body'.length) || '/';
  return path.replace(/^\/params\//, '/path/');
}

const BODY_REQUIRED = 'a JSON body is required';

/** The validator's words, except where they name its own request model rather than the client's body. */
function fieldMessage(message: string | undefined): string {
  if (message === "must have required property 'body'") return BODY_REQUIRED;
  return message ?? 'is invalid';
}

/** 415 where the operation lists it; 400 with the same code where it does not (the seed's operations). */
function unsupportedMediaType(op: OperationInfo | undefined, requestId: string, detail: string): Problem {
  return buildProblem('unsupported_media_type', requestId, { status: op && !op.statuses.has(415) ? 400 : 415, detail });
}

function fromValidator(error: ValidatorError, op: OperationInfo | undefined, requestId: string): Problem {
  const items = error.errors ?? [];
  const fieldErrors: FieldError[] = items.map((e) => ({ pointer: toPointer(e.path), message: fieldMessage(e.message) }));
  if (error.status === 415) return unsupportedMediaType(op, requestId, 'Send this operation the media type the contract names.');
  if (error.status === 405) return buildProblem('method_not_allowed', requestId);
  if (error.status === 404) return buildProblem('not_found', requestId);
  if (error.status === 413) return buildProblem('payload_too_large', requestId);
  // The upload token is the credential of its operation: one that breaks its pattern is an invalid token (403), and
  // is refused before anything about the body is said.
  if (op?.operationId === 'uploadBuildArtifact' && items.some((e) => e.path === '/params/token')) {
    return buildProblem('upload_url_invalid', requestId, { detail: 'The upload URL is invalid or expired.' });
  }
  // A path id that breaks its pattern names no resource: 404 where the operation lists no 400 (getBuild, getScan).
  if (items.length > 0 && items.every((e) => e.path?.startsWith('/params/')) && op && !op.statuses.has(400)) {
    return buildProblem('not_found', requestId, { detail: 'No resource has this id.' });
  }
  // A malformed header is a malformed request, whatever the operation lists.
  if (items.length > 0 && items.every((e) => e.path?.startsWith('/headers/'))) {
    return buildProblem('malformed_request', requestId, { status: 400, detail: 'A request header is malformed.', errors: fieldErrors });
  }
  // Well-formed but breaking the schema: 422 where the operation lists it, 400 otherwise.
  const status = op?.statuses.has(422) ? 422 : 400;
  return buildProblem('validation_failed', requestId, { status, detail: 'The request does not match the contract.', errors: fieldErrors });
}

function bodyParserProblem(error: any, requestId: string, op: OperationInfo | undefined): Problem | null {
  if (error?.type === 'entity.parse.failed') return buildProblem('malformed_request', requestId, { status: 400, detail: 'The body is not valid JSON.' });
  if (error?.type === 'entity.empty') {
    const status = op?.statuses.has(422) ? 422 : 400;
    return buildProblem('validation_failed', requestId, { status, detail: 'The request does not match the contract.', errors: [{ pointer: '/', message: BODY_REQUIRED }] });
  }
  if (error?.type === 'encoding.invalid') return buildProblem('malformed_request', requestId, { status: 400, detail: 'The body is not valid UTF-8.' });
  if (error?.type === 'entity.too.large') {
    // 413 is the upload's status in the contract; the JSON operations list 400 for a body they cannot take.
    if (op?.statuses.has(413)) return buildProblem('payload_too_large', requestId, { detail: 'The body is larger than allowed.' });
    const limit = typeof error.limit === 'number' ? ` (the limit is ${describeLimit(error.limit)})` : '';
    return buildProblem('malformed_request', requestId, { status: 400, detail: `The body is larger than allowed${limit}.` });
  }
  if (error?.type === 'encoding.unsupported' || error?.type === 'charset.unsupported') {
    return unsupportedMediaType(op, requestId, 'Unsupported body encoding or charset.');
  }
  if (error?.type === 'request.aborted') return buildProblem('malformed_request', requestId, { status: 400, detail: 'The request was aborted.' });
  return null;
}

/** Turns every error into an RFC 9457 problem. Unknown errors are masked and logged with the request id. */
export const errorHandler: ErrorRequestHandler = (error, req, res, _next) => {
  const state = requestState(res);
  const requestId = state.requestId;
  let problem: Problem | null = null;
  if (isDomainError(error)) {
    let status = error.status;
    if (error.code === 'validation_failed' && state.op && !state.op.statuses.has(422)) status = 400;
    problem = buildProblem(error.code, requestId, { status, detail: error.message, errors: error.errors, retryAfter: error.retryAfter });
  } else if (isValidatorError(error)) {
    problem = fromValidator(error, state.op, requestId);
  } else {
    problem = bodyParserProblem(error, requestId, state.op);
  }
  if (!problem) {
    state.logger.error({ err: error, operationId: state.op?.operationId }, 'unexpected error');
    problem = buildProblem('internal_error', requestId, { detail: 'An unexpected error occurred. Quote the instance when you contact support.' });
  }
  sendProblem(req as Request, res, problem);
};
