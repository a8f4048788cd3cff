/**
 * npm run bench:observability: what the access log and the metrics cost a request. The same Express app answers a
 * small JSON body, without and then with the two middlewares the service runs on every request (the access log at
 * level info into /dev/null through the service's redacting logger, and the HTTP metrics), REQUESTS requests at 32
 * connections each; the runs alternate (A B A B). Measured as CPU time of this process per request (load generator
 * included, the same for both), which a busy machine disturbs far less than throughput; throughput is printed too.
 * Then the time and size of a /metrics scrape. Target: both together add at most 100 us of CPU per request.
 */
import type { AddressInfo } from 'node:net';
import http from 'node:http';
import autocannon from 'autocannon';
import express from 'express';
import pino from 'pino';
import { fmt } from './support';
import { createLogger, redactPath } from '../src/core/logger';
import { requestContext } from '../src/http/request-context';
import { accessLog } from '../src/http/access-log';
import { httpMetrics } from '../src/metrics/http';
import { registry } from '../src/metrics/registry';
import type { Deps } from '../src/core/deps';

const CONNECTIONS = 32;
const ROUNDS = 2;

/** The access line the request-context middleware used to write itself, for comparison. */
const formerAccessLine: express.RequestHandler = (req, res, next) => {
  const started = process.hrtime.bigint();
  res.on('finish', () => {
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    res.locals.shieldgate.logger.info({ method: req.method, path: redactPath(req.originalUrl), status: res.statusCode, ms: Math.round(ms * 10) / 10, operationId: 'whoami' }, 'request');
  });
  next();
};

async function serve(observed: boolean): Promise<{ url: string; close(): Promise<void> }> {
  const logger = createLogger('info', pino.destination({ dest: '/dev/null', sync: true }));
  const deps = { logger, config: { validateResponses: false } } as unknown as Deps;
  const app = express();
  app.use(requestContext(deps));
  // BENCH_PART=log or metrics measures one of the two alone; =former, the line the request-context
  // middleware used to write itself.
  const part = process.env.BENCH_PART;
  if (observed && part === 'former') app.use(formerAccessLine);
  if (observed && part !== 'metrics' && part !== 'former') app.use(accessLog(() => logger));
  if (observed && part !== 'log' && part !== 'former') app.use(httpMetrics());
  app.get('/v1/whoami', (_req, res) => void res.json({ appId: 'app_bench', plan: 'enterprise', scopes: ['builds:read'] }));
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/whoami`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 20_000);

/** CPU microseconds per request and requests per second. */
async function load(url: string, amount: number): Promise<{ cpuUs: number; rps: number }> {
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  const result = await autocannon({ url, connections: CONNECTIONS, amount, headers: { authorization: 'Bearer svc_live_benchKey_secretPartOfTheKey' } });
  const used = process.cpuUsage(cpu);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (result.non2xx || result.errors) throw new Error(`${result.non2xx} non-2xx, ${result.errors} errors`);
  return { cpuUs: (used.user + used.system) / amount, rps: amount / seconds };
}

async function main(): Promise<void> {
  const bare = await serve(false);
  const observed = await serve(true);
  try {
    await load(bare.url, 5000); // warm-up: JIT
    await load(observed.url, 5000);
    const without: Array<{ cpuUs: number; rps: number }> = [];
    const withBoth: Array<{ cpuUs: number; rps: number }> = [];
    for (let round = 0; round < ROUNDS; round++) {
      without.push(await load(bare.url, REQUESTS));
      withBoth.push(await load(observed.url, REQUESTS));
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const show = (runs: Array<{ cpuUs: number; rps: number }>) => runs.map((r) => `${fmt(r.cpuUs, 0)} us CPU (${fmt(r.rps, 0)} req/s)`).join(', ');
    const added = mean(withBoth.map((r) => r.cpuUs)) - mean(without.map((r) => r.cpuUs));
    console.log(`observability benchmark: ${CONNECTIONS} connections, ${ROUNDS} x ${REQUESTS} requests each, in one process (load generator included)`);
    console.log(`without access log and metrics: ${show(without)} per request`);
    console.log(`with both                     : ${show(withBoth)} per request`);
    console.log(`added: ${fmt(added, 0)} us of CPU per request (target <= 100: ${added <= 100 ? 'met' : 'NOT met'})`);

    const started = process.hrtime.bigint();
    const text = await registry.metrics();
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    const series = text.split('\n').filter((line) => line && !line.startsWith('#')).length;
    console.log(`/metrics scrape: ${series} samples, ${fmt(text.length / 1024)} KiB, rendered in ${fmt(ms, 2)} ms`);
  } finally {
    await bare.close();
    await observed.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
