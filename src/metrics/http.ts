import type { RequestHandler } from 'express';
import { metrics } from './registry';
import { operationOf } from '../http/operation';
import { onRequestEnd } from './request-end';

interface Series {
  requests: { inc(): void };
  duration: { observe(seconds: number): void };
}

/**
 * The two series of each (api, operation, status), looked up once: prom-client otherwise sorts and joins a label
 * object's keys on every call. As bounded as the labels themselves (fixed sets, src/metrics/registry.ts).
 */
const seriesByLabels = new Map<string, Series>();

function seriesOf(api: string, operation: string, status: string): Series {
  const key = `${api}\n${operation}\n${status}`;
  let series = seriesByLabels.get(key);
  if (!series) {
    const labels = { api, operation, status };
    series = { requests: metrics.httpRequests.labels(labels), duration: metrics.httpDuration.labels(labels) };
    seriesByLabels.set(key, series);
  }
  return series;
}

/** Counts every request and times it, by API, operation and status, once it is over (aborted ones included). */
export function httpMetrics(): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    onRequestEnd(res, (aborted) => {
      const { api, operation } = operationOf(req, res);
      const series = seriesOf(api, operation, aborted ? 'aborted' : String(res.statusCode));
      series.requests.inc();
      series.duration.observe((performance.now() - started) / 1000);
    });
    next();
  };
}
