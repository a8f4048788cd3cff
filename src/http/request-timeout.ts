import type { RequestHandler } from 'express';
import { closeOnEarlyAnswer } from './early-answer';

/** The one route whose body may take long: it is watched for stalls instead (src/services/builds-service.ts). */
const UPLOAD_PATH = /^\/v1\/uploads\//;

/**
 * A request whose body has not fully arrived `timeoutMs` after its headers is dropped: the socket is destroyed, as
 * Node's own requestTimeout would, so a client trickling a body cannot hold a connection (and a parser's buffer) open.
 * A handler still working on a complete request is never cut: this bounds the client, not the service. A request
 * that declares no body (no Content-Length, no Transfer-Encoding) is complete with its headers: nothing to watch.
 * On every route with a body, the upload's included, an answer sent before the body arrived closes the connection
 * (src/http/early-answer.ts): once answered, this timer no longer guards it.
 */
export function requestTimeout(timeoutMs: number): RequestHandler {
  return (req, res, next) => {
    const headers = req.headers;
    const length = headers['content-length'];
    if ((length === undefined || length === '0') && headers['transfer-encoding'] === undefined) return next();
    closeOnEarlyAnswer(req, res);
    if (UPLOAD_PATH.test(req.path)) return next();
    const timer = setTimeout(() => {
      if (!req.complete && !res.writableEnded) req.socket.destroy();
    }, timeoutMs);
    timer.unref();
    const clear = () => clearTimeout(timer);
    res.once('finish', clear);
    res.once('close', clear);
    next();
  };
}
