import type { RequestHandler } from 'express';
import { metrics } from './registry';
import { operationOf } from '../http/operation';
import { onRequestEnd } from './request-end';

/** Counts every request and times it, by API, operation and status, once it is over (aborted ones included). */
export function httpMetrics(): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    onRequestEnd(res, (aborted) => {
      const { api, operation } = operationOf(req, res);
      const labels = { api, operation, status: aborted ? 'aborted' : String(res.statusCode) };
      metrics.httpRequests.inc(labels);
      metrics.httpDuration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
    });
    next();
  };
}
