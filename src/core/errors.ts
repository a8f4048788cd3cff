/** Typed domain errors: a stable code and its HTTP status. Services raise them; transports translate them. */

export const ERROR_STATUS = {
  malformed_request: 400,
  validation_failed: 422, // 400 where the operation lists no 422 (decided at the REST edge)
  invalid_cursor: 400,
  unauthorized: 401,
  insufficient_scope: 403,
  forbidden: 403,
  upload_url_invalid: 403,
  not_found: 404,
  method_not_allowed: 405,
  idempotency_in_progress: 409,
  artifact_already_uploaded: 409,
  upload_in_progress: 409,
  too_many_uploads: 409,
  artifact_not_pending: 409,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  artifact_mismatch: 422,
  rate_limited: 429,
  internal_error: 500,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export const ERROR_TITLES: Record<ErrorCode, string> = {
  malformed_request: 'Malformed request',
  validation_failed: 'Validation failed',
  invalid_cursor: 'Invalid cursor',
  unauthorized: 'Unauthorized',
  insufficient_scope: 'Insufficient scope',
  forbidden: 'Forbidden',
  upload_url_invalid: 'Upload URL invalid or expired',
  not_found: 'Not found',
  method_not_allowed: 'Method not allowed',
  idempotency_in_progress: 'Request in progress',
  artifact_already_uploaded: 'Artifact already uploaded',
  upload_in_progress: 'Upload in progress',
  too_many_uploads: 'Too many uploads in flight',
  artifact_not_pending: 'Artifact not pending',
  conflict: 'Conflict',
  payload_too_large: 'Payload too large',
  unsupported_media_type: 'Unsupported media type',
  idempotency_key_reused: 'Idempotency key reused',
  artifact_mismatch: 'Artifact does not match its declaration',
  rate_limited: 'Too many requests',
  internal_error: 'Internal server error',
  unavailable: 'Service unavailable',
};

export interface FieldError {
  pointer: string;
  message: string;
}

export interface DomainErrorOptions {
  errors?: FieldError[];
  retryAfter?: number;
  cause?: unknown;
}

export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly errors?: FieldError[];
  readonly retryAfter?: number;

  constructor(code: ErrorCode, detail?: string, options: DomainErrorOptions = {}) {
    super(detail ?? ERROR_TITLES[code], { cause: options.cause });
    this.name = 'DomainError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.errors = options.errors;
    this.retryAfter = options.retryAfter;
  }
}

export const notFound = (what = 'Resource') => new DomainError('not_found', `${what} not found.`);

export const validationFailed = (errors: FieldError[], detail = 'The request is not valid.') =>
  new DomainError('validation_failed', detail, { errors });

export function isDomainError(error: unknown): error is DomainError {
  return error instanceof DomainError;
}

