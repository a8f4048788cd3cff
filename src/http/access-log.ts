import type { Socket } from 'node:net';
import type { Request, RequestHandler, Response } from 'express';
import type { Logger } from '../core/logger';
import { STAFF_PRINCIPAL, type RequestState } from './request-state';
import { operationOf } from './operation';

/**
 * The fields of an access-log line. Routes are named by their template and operation, never by the requested URL:
 * an upload URL carries its signed token and a query string may carry anything. No header is logged (authorization,
 * cookies), no body, no device id. `writtenBefore`: bytes already written on the connection when the request arrived
 * (keep-alive connections carry many).
 */
function accessFields(req: Request, res: Response, ms: number, writtenBefore: number): Record<string, unknown> {
  const { api, operation, route } = operationOf(req, res);
  const state = res.locals.shieldgate as RequestState | undefined;
  const principal = state?.principal ?? (res.locals[STAFF_PRINCIPAL] as RequestState['principal']);
  const socket: Socket | null = req.socket;
  const declared = Number(req.headers['content-length']);
  const fields: Record<string, unknown> = {
    requestId: state?.requestId,
    method: req.method,
    api,
    operation,
    route,
    // Null when the connection closed before any answer was sent.
    status: res.headersSent ? res.statusCode : null,
    ms,
    reqBytes: Number.isSafeInteger(declared) && declared >= 0 ? declared : null,
    resBytes: socket ? Math.max(0, socket.bytesWritten - writtenBefore) : null,
    credential: principal?.kind ?? 'anonymous',
  };
  if (principal && 'appId' in principal) fields.appId = principal.appId;
  if (!res.writableFinished) fields.aborted = true;
  return fields;
}

/**
 * One access-log line per request, written when the response is finished or, for a request the client abandoned,
 * when the connection closes (`aborted: true`, level warn; error for a 5xx). It logs through the service's logger as
 * it is when the request arrives, so the secret redaction of src/core/logger.ts applies to it as to every line, with
 * the request id among the line's own fields. Written here rather than by pino-http, which made two loggers per
 * request (one bound to the request, unused) and three arrays and closures: the line's cost is now the line's. A
 * level the logger does not write costs nothing but the listeners.
 */
export function accessLog(currentLogger: () => Logger): RequestHandler {
  return (req, res, next) => {
    const logger = currentLogger();
    const started = Date.now();
    const writtenBefore = req.socket?.bytesWritten ?? 0;
    const end = (): void => {
      res.removeListener('close', end);
      res.removeListener('finish', end);
      res.removeListener('error', end);
      const level = !res.writableFinished ? 'warn' : res.statusCode >= 500 ? 'error' : 'info';
      if (!logger.isLevelEnabled(level)) return;
      logger[level](accessFields(req, res, Date.now() - started, writtenBefore), 'request');
    };
    res.on('close', end);
    res.on('finish', end);
    // A response that errs is over too; listening also keeps such an error from being thrown as unhandled.
    res.on('error', end);
    next();
  };
}
