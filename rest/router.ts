import { Router, type RequestHandler } from 'express';
import type { Deps } from '../src/core/deps';
import { jsonBody } from '../src/http/json-body';
import { operationTable } from './support/spec';
import type { HandlerMap } from './handler';
import { route } from './middleware/route';
import { authenticate, rejectUnauthenticated } from './middleware/authenticate';
import { rateLimit } from './middleware/rate-limit';
import { idempotency } from './middleware/idempotency';
import { validate } from './middleware/validate';
import { requestState } from '../src/http/request-state';
import { inSequence } from '../src/http/sequence';
import { handlers } from './handlers';

function dispatch(map: HandlerMap): RequestHandler {
  return async (req, res) => {
    const state = requestState(res);
    await map[state.op!.operationId](req, res, state.ctx!);
  };
}

/**
 * The /v1 facade, in the order a request meets it: find the operation (404/405), resolve the credential, count the
 * request (headers, 429), refuse a bad credential (401), parse JSON (400), validate against the contract (400/415/422),
 * hold the Idempotency-Key, run the handler.
 */
export function createRestRouter(deps: Deps): Router {
  const router = Router();
  const table = operationTable();
  const parseJson = jsonBody(1024 * 1024, { emptyIsMissing: true });
  // One layer of the router for the whole chain (src/http/sequence.ts): every /v1 request crosses all of it.
  router.use(
    inSequence([
      route(table),
      authenticate(deps),
      rateLimit(deps),
      rejectUnauthenticated,
      // Only operations with a JSON body parse one: the upload's bytes stay a stream, whatever type the client claims.
      (req, res, next) => (requestState(res).op?.jsonBody ? parseJson(req, res, next) : next()),
      validate(deps, table),
      idempotency(deps),
      dispatch(handlers),
    ]),
  );
  return router;
}
