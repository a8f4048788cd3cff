import type { Response } from 'express';
import type { Principal } from '../src/auth/principal';
import type { Logger } from '../src/logger';
import type { RequestContext } from '../src/context';
import type { OperationInfo } from './spec';

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

export function requestState(res: Response): RequestState {
  return res.locals.shieldgate as RequestState;
}
