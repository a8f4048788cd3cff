import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import type { Config } from '../core/config';
import { buildProblem, sendProblem } from '../http/problem';
import type { RequestState } from '../http/request-state';
import { registry } from './registry';

const digest = (text: string) => createHash('sha256').update(text).digest();

/** A direct connection from this host: the address of the socket, never a forwarded one. */
export function isDirectLoopback(req: Request): boolean {
  const address = req.socket.remoteAddress ?? '';
  const loopback = address === '::1' || /^(::ffff:)?127\.\d+\.\d+\.\d+$/.test(address);
  // A reverse proxy on the same host connects over loopback too: a request it forwarded is not a local one.
  return loopback && req.get('x-forwarded-for') === undefined && req.get('forwarded') === undefined;
}

/**
 * GET /metrics in the Prometheus text format. Who may read it: with METRICS_TOKEN set, a request bearing that token
 * (compared in constant time), from anywhere; without it, only a direct loopback connection (a scraper or sidecar on
 * the same host), so an instance exposed to the internet does not publish its figures by default. Metrics carry no
 * secrets or ids, but they do say how busy the service is and with what.
 */
export function metricsEndpoint(config: Pick<Config, 'metricsToken'>): RequestHandler {
  const expected = config.metricsToken ? digest(config.metricsToken) : null;
  return async (req, res, next) => {
    const requestId = (res.locals.shieldgate as RequestState).requestId;
    if (expected) {
      const match = /^Bearer ([\x21-\x7e]{1,256})$/.exec(req.get('authorization') ?? '');
      if (!match || !timingSafeEqual(digest(match[1]), expected)) {
        res.setHeader('WWW-Authenticate', 'Bearer realm="shieldgate-metrics"');
        return sendProblem(req, res, buildProblem('unauthorized', requestId, { detail: 'Reading /metrics needs the METRICS_TOKEN bearer token.' }));
      }
    } else if (!isDirectLoopback(req)) {
      return sendProblem(req, res, buildProblem('forbidden', requestId, { detail: '/metrics is served over loopback only unless METRICS_TOKEN is set.' }));
    }
    try {
      const text = await registry.metrics();
      res.status(200).type(registry.contentType).send(text);
    } catch (error) {
      next(error);
    }
  };
}
