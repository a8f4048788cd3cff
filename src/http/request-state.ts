import type { Response } from 'express';
import type { Principal } from '../auth/principal';
import type { Logger } from '../core/logger';
import type { RequestContext } from '../services/context';
import type { OperationInfo } from '../../rest/support/spec';

/** What the middleware chain learns about a request, kept on res.locals under one typed key. */
export interface RequestState {
  requestId: string;
  logger: Logger;
  op?: OperationInfo;
  principal?: Principal;
  authFailed?: boolean;
  ctx?: RequestContext;
  /** Refuse to send a status the operation does not list (VALIDATE_RESPONSES, on in tests). */
  checkContract?: boolean;
}

/**
 * Where /graphql's gate (src/graphql/gate.ts) leaves the staff principal for the GraphQL context (no second lookup of
 * the token); the access log and the metrics read it there.
 */
export const STAFF_PRINCIPAL = 'shieldgateStaff';

export function requestState(res: Response): RequestState {
  return res.locals.shieldgate as RequestState;
}
