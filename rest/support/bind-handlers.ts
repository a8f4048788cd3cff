import type { HandlerMap, Handler, RestBody, RestHandler, RestHandlers, RestParams, RestQuery } from '../handler';
import type { OperationId } from './spec';
import { pathParams } from './request';

/*
 * The one place a request's body, path and query are given the types of its operation (rest/handler.ts declares
 * them): the validator checked each against that operation's contract before the handler runs. It lives here, below
 * rest/router.ts and rest/handlers, so that neither folder imports the other's code at run time.
 */

function bind<K extends OperationId>(handler: RestHandler<K>): Handler {
  return (req, res, ctx) =>
    handler(
      {
        // The validator checked body, path and query against operation K's contract before this runs.
        body: req.body as RestBody<K>,
        params: pathParams(req) as RestParams<K>,
        query: req.query as RestQuery<K>,
        answer: (status, body) => void res.status(status).json(body),
        req,
        res,
      },
      ctx,
    );
}

/** The router's map: every operation's typed handler, given the request as its contract types it. */
export function bindAll(handlers: RestHandlers): HandlerMap {
  return Object.fromEntries(Object.entries(handlers).map(([id, handler]) => [id, bind(handler as RestHandler<OperationId>)])) as HandlerMap;
}
