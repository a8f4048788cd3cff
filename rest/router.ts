import { isUtf8 } from 'node:buffer';
import express, { Router, type RequestHandler } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import type { Deps } from '../src/deps';
import { operationTable, specCopy } from './spec';
import type { HandlerMap } from './handler';
import { route } from './middleware/route';
import { authenticate, rejectUnauthenticated } from './middleware/authenticate';
import { rateLimit } from './middleware/rate-limit';
import { idempotency } from './middleware/idempotency';
import { requestState } from './state';
import { handlers } from './handlers';

function dispatch(map: HandlerMap): RequestHandler {
  return async (req, res) => {
    const state = requestState(res);
    await map[state.op!.operationId](req, res, state.ctx!);
  };
}

/**
 * Checks the raw JSON body before parsing. JSON is UTF-8 (RFC 8259): the parser would replace bad bytes with U+FFFD
 * and store text nobody sent. An empty body would parse as `{}` and be reported as missing fields; it is a missing body.
 */
function checkJsonBytes(_req: unknown, _res: unknown, body: Buffer): void {
  if (body.length === 0) throw Object.assign(new Error('body is empty'), { status: 400, type: 'entity.empty' });
  if (!isUtf8(body)) throw Object.assign(new Error('body is not UTF-8'), { status: 400, type: 'encoding.invalid' });
}

/**
 * The /v1 facade, in the order a request meets it: find the operation (404/405), resolve the credential, count the
 * request (headers, 429), refuse a bad credential (401), parse JSON (400), validate against the contract (400/415/422),
 * hold the Idempotency-Key, run the handler.
 */
export function createRestRouter(deps: Deps): Router {
  const router = Router();
  router.use(route(operationTable()));
  router.use(authenticate(deps));
  router.use(rateLimit(deps));
  router.use(rejectUnauthenticated);
  // Not strict: a top-level `null` or `3` is valid JSON, and the contract validation says what is wrong with it.
  const parseJson = express.json({ limit: '1mb', strict: false, type: ['application/json', 'application/*+json'], verify: checkJsonBytes });
  // Only operations with a JSON body parse one: the upload's bytes stay a stream, whatever type the client claims.
  router.use((req, res, next) => (requestState(res).op?.jsonBody ? parseJson(req, res, next) : next()));
  router.use(
    OpenApiValidator.middleware({
      apiSpec: specCopy() as never,
      validateRequests: { allowUnknownQueryParameters: false, removeAdditional: false, allErrors: true },
      validateResponses: deps.config.validateResponses ? { removeAdditional: false } : false,
      validateSecurity: false, // credentials and scopes are ours to check (auth middleware and services)
      validateFormats: true,
      ignoreUndocumented: true, // the route step already answered every path outside the contract
      fileUploader: false,
    }),
  );
  router.use(idempotency(deps));
  router.use(dispatch(handlers));
  return router;
}
