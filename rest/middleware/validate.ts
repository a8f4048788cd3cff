import type { RequestHandler } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import type { Deps } from '../../src/core/deps';
import { requestState } from '../../src/http/request-state';
import { inSequence } from '../../src/http/sequence';
import { loadSpec, specCopy, type OperationInfo } from '../support/spec';

/**
 * Operations the contract gives nothing to check on the way in: no parameter (path, query or header) and no body.
 * For these, a request without a query string gives the validator nothing to do but find its route, which costs a
 * path-to-regexp compilation of every path of the contract, per request (express-openapi-validator 5.6.2's
 * lookupRoute); a query string is still refused by it (`allowUnknownQueryParameters: false`).
 */
function nothingToValidate(table: OperationInfo[]): Set<OperationInfo> {
  const spec = loadSpec();
  const free = new Set<OperationInfo>();
  for (const op of table) {
    const item = spec.paths[op.pathTemplate];
    const operation = item?.[op.method];
    if (!operation || operation.requestBody) continue;
    if ((item.parameters?.length ?? 0) > 0 || (operation.parameters?.length ?? 0) > 0) continue;
    free.add(op);
  }
  return free;
}

/**
 * Requests against the contract (400/415/422 through the error handler), and with VALIDATE_RESPONSES the answers too.
 * A request of an operation with nothing to check, and no query string, skips it when answers are not checked.
 */
export function validate(deps: Deps, table: OperationInfo[]): RequestHandler {
  const validator = inSequence(
    OpenApiValidator.middleware({
      apiSpec: specCopy() as never,
      validateRequests: { allowUnknownQueryParameters: false, removeAdditional: false, allErrors: true },
      validateResponses: deps.config.validateResponses ? { removeAdditional: false } : false,
      validateSecurity: false, // credentials and scopes are ours to check (auth middleware and services)
      validateFormats: true,
      ignoreUndocumented: true, // the route step already answered every path outside the contract
      fileUploader: false,
    }) as RequestHandler[],
  );
  if (deps.config.validateResponses) return validator;
  const free = nothingToValidate(table);
  return (req, res, next) => {
    const op = requestState(res).op;
    if (op && free.has(op) && !req.originalUrl.includes('?')) return next();
    return validator(req, res, next);
  };
}
