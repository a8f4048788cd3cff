import type { Request } from 'express';
import type { HandlerMap, Handler, RestBody, RestHandler, RestHandlers, RestParams, RestQuery } from '../handler';
import type { OperationId } from './spec';
import { pathParams } from './request';

/*
 * The one place a request is given the types of its operation (rest/handler.ts declares them): the validator checked
 * its body, path and query against that operation's contract before the handler runs. It lives here, below
 * rest/router.ts and rest/handlers, so that neither folder imports the other's code at run time.
 */

/** A request to operation K as the validator lets it through: body and query as K's contract types them. */
type ValidatedRequest<K extends OperationId> = Request<Record<string, string>, unknown, RestBody<K>, RestQuery<K>>;

/**
 * The request the router matched to operation K, typed as K's contract: true once the validator (rest/middleware/
 * validate.ts), which runs before every handler, let it through. Express types what it parsed loosely (any body,
 * string queries), so this is where the contract's types are taken on, once, for the whole request.
 */
function validated<K extends OperationId>(req: Request): ValidatedRequest<K> {
  return req as unknown as ValidatedRequest<K>;
}

function bind<K extends OperationId>(handler: RestHandler<K>): Handler {
  return (req, res, ctx) => {
    const request = validated<K>(req);
    return handler(
      {
        body: request.body,
        // The matched operation's path parameters (the validator's route match), checked with the rest.
        params: pathParams(req) as RestParams<K>,
        query: request.query,
        answer: (status, body) => void res.status(status).json(body),
        req,
        res,
      },
      ctx,
    );
  };
}

/** The router's map: every operation's typed handler, given the request as its contract types it. */
export function bindAll(handlers: RestHandlers): HandlerMap {
  return Object.fromEntries(Object.entries(handlers).map(([id, handler]) => [id, bind(handler as RestHandler<OperationId>)])) as HandlerMap;
}
