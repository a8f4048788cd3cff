import type { Socket } from 'node:net';
import type { Request, RequestHandler, Response } from 'express';
import { pinoHttp } from 'pino-http';
import type { Logger } from '../core/logger';
import { STAFF_PRINCIPAL, type RequestState } from './request-state';
import { operationOf } from './operation';

/** Bytes already written on the connection when the request arrived (keep-alive connections carry many). */
const writtenBefore = new WeakMap<Response, number>();

/**
 * The fields of an access-log line. Routes are named by their template and operation, never by the requested URL:
 * an upload URL carries its signed token and a query string may carry anything. No header is logged (authorization,
 * cookies), no body, no device id.
 */
function accessFields(req: Request, res: Response, ms: number): Record<string, unknown> {
  const { api, operation, route } = operationOf(req, res);
  const state = res.locals.shieldgate as RequestState | undefined;
  const principal = state?.principal ?? (res.locals[STAFF_PRINCIPAL] as RequestState['principal']);
  const socket: Socket | null = req.socket;
  const declared = Number(req.get('content-length'));
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
    resBytes: socket ? Math.max(0, socket.bytesWritten - (writtenBefore.get(res) ?? socket.bytesWritten)) : null,
    credential: principal?.kind ?? 'anonymous',
  };
  if (principal && 'appId' in principal) fields.appId = principal.appId;
  if (!res.writableFinished) fields.aborted = true;
  return fields;
}

function createAccessLogger(logger: Logger): RequestHandler {
  return pinoHttp({
    logger,
    // The id the request-context middleware gave the request (the client's X-Request-Id when well formed).
    genReqId: (_req, res) => (res as Response).locals?.shieldgate?.requestId,
    customAttributeKeys: { reqId: 'requestId', responseTime: 'ms' },
    // The line is written by the base logger with the request id among its own fields: a child logger per request
    // (what quietReqLogger makes) costs more than the line itself. pino-http still binds the request to one logger it
    // makes per request (req.log, unused here); it is bound as nothing, instead of serializing every header of every
    // request only to drop them.
    quietReqLogger: false,
    quietResLogger: true,
    wrapSerializers: false,
    serializers: { req: () => undefined, res: () => undefined },
    customLogLevel: (_req, res) => (!res.writableFinished ? 'warn' : res.statusCode >= 500 ? 'error' : 'info'),
    customSuccessMessage: () => 'request',
    customErrorMessage: () => 'request',
    customSuccessObject: (req, res, val: { ms: number }) => accessFields(req as Request, res as Response, val.ms),
    customErrorObject: (req, res, _error, val: { ms: number }) => accessFields(req as Request, res as Response, val.ms),
  }) as unknown as RequestHandler;
}

/**
 * One access-log line per request (pino-http), written when the response is finished or, for a request the client
 * abandoned, when the connection closes (`aborted: true`, level warn). It logs through the service's logger as it is
 * when the request arrives, so the secret redaction of src/core/logger.ts applies to it as to every line.
 */
export function accessLog(currentLogger: () => Logger): RequestHandler {
  const byLogger = new WeakMap<Logger, RequestHandler>();
  return (req, res, next) => {
    writtenBefore.set(res, req.socket?.bytesWritten ?? 0);
    const logger = currentLogger();
    let handler = byLogger.get(logger);
    if (!handler) byLogger.set(logger, (handler = createAccessLogger(logger)));
    handler(req, res, next);
  };
}
