import type { Socket } from 'node:net';
import { Kind, parse } from 'graphql';
import type { Request, RequestHandler, Response } from 'express';
import type { Logger } from '../core/logger';
import { STAFF_PRINCIPAL, type RequestState } from './request-state';
import { operationOf } from './operation';

/** A GraphQL name (the specification's Name), bounded: what a staff request's line carries as its operation's name. */
const GRAPHQL_NAME = /^[_A-Za-z][_0-9A-Za-z]{0,127}$/;

/**
 * The fields of an access-log line. Routes are named by their template and operation, never by the requested URL:
 * an upload URL carries its signed token and a query string may carry anything. No header is logged (authorization,
 * cookies), no body, no device id; the caller by its id (staff id, key id, OIDC subject and rule), never its token.
 * For /graphql, `operation` is the staff member's operation name (src/http/operation.ts). `writtenBefore`: bytes
 * already written on the connection when the request arrived (keep-alive connections carry many).
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
  // Who, by an identifier that is no credential: staff reads and writes of any tenant's data are attributable to a
  // person, an app's requests to one of its keys or to the CI job (OIDC subject) and trust rule its token came from.
  if (principal?.kind === 'staff') {
    fields.staffId = principal.staffId;
    // The name as sent: `operation` is a metric label, which shares `other` past a bound of names; a line is not.
    const name = api === 'graphql' ? staffOperationName(req.body) : undefined;
    if (name) fields.operationName = name;
  }
  else if (principal?.kind === 'api_key') fields.keyId = principal.keyId;
  else if (principal?.kind === 'oidc') {
    fields.ruleId = principal.bucketRuleId;
    if (principal.subject !== undefined) fields.subject = principal.subject;
  }
  if (!res.writableFinished) fields.aborted = true;
  return fields;
}

/**
 * The operation a staff /graphql request ran: its `operationName`, or the name of the document's one operation (a
 * document with several must name the one to run). Parsed again only for staff requests whose body named none; the
 * body is bounded (100 KB) and was parsed by Apollo already.
 */
function staffOperationName(body: unknown): string | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const { operationName, query } = body as { operationName?: unknown; query?: unknown };
  if (typeof operationName === 'string') return GRAPHQL_NAME.test(operationName) ? operationName : undefined;
  if (typeof query !== 'string') return undefined;
  try {
    const operations = parse(query, { noLocation: true }).definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
    return operations.length === 1 ? operations[0].name?.value : undefined;
  } catch {
    return undefined; // refused by Apollo as well: the line's status says so
  }
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
