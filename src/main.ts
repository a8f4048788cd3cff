import { ConfigError, loadConfig, type Config } from './core/config';
import { createLogger } from './core/logger';
import { createDeps, closeDeps } from './bootstrap';
import { createHttpApp } from './app';
import { createHttpServer } from './http/server';
import http from 'node:http';
import { resolveDatabase } from './embedded/database';
import { describeBusyPort, dialAddress } from './embedded/running-instance';
import { createAuditRetention, createJobRunner } from './jobs';
import { startThreatRetention } from './jobs/threat-retention';
import { WebhookWorker } from './webhooks/delivery-worker';
import { createWebhookRetention } from './jobs/webhook-retention';

function readConfig(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`shieldgate: configuration error: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

/** Answers while the service starts behind a port it already holds: not ready yet, ask again in a second. */
const starting: http.RequestListener = (_req, res) => {
  res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1', connection: 'close' });
  res.end(JSON.stringify({ status: 'starting' }));
};

/** Takes the port first, so a second start fails before it changes anything (embedded.json stays the first's). */
async function holdPort(server: http.Server, config: Config): Promise<void> {
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const line = code === 'EADDRINUSE' ? await describeBusyPort(config.host, config.port, config.dataDir) : `cannot listen on ${config.host}:${config.port}: ${(error as Error).message}`;
    process.stderr.write(`shieldgate: ${line}\n`);
    process.exit(1);
  }
}

async function main(): Promise<void> {
  const base = readConfig();
  const logger = createLogger(base.logLevel);
  const server = createHttpServer(base, starting);
  await holdPort(server, base);
  const database = await resolveDatabase(base, { reuseRunning: false, record: { http: dialAddress(base.host, base.port) } });
  const config = Object.freeze({ ...base, mongodbUri: database.uri });
  const deps = await createDeps(config, { logger });
  // Here, not in createDeps: the operator CLI must still rotate keys when the key-encryption key was lost.
  for (const keys of [deps.signingKeys, deps.attestKeys]) {
    const keyWarning = await keys.checkActiveKey();
    if (keyWarning) logger.warn(keyWarning);
  }
  const { app, stop: stopGraphql } = await createHttpApp(deps);
  server.off('request', starting);
  server.on('request', app);
  logger.info(
    { address: `http://${config.host}:${config.port}`, publicBaseUrl: config.publicBaseUrl, database: base.mongodbUri ? 'mongodb' : 'embedded', redis: Boolean(config.redisUrl), artifactStore: config.artifactStore },
    'shieldgate listening',
  );
  // Static scans run off the request path; every instance polls the durable job collection.
  const jobs = createJobRunner(deps);
  jobs.start();
  // Retention sweeps: FerretDB has no TTL index, so expired entries are removed by one instance per period.
  const auditRetention = createAuditRetention(deps);
  auditRetention.start();
  // Threat retention and merge-record folding: every instance sweeps; the sweep is safe to run concurrently.
  const stopThreatRetention = startThreatRetention(deps.repos, deps.clock, logger.child({ component: 'threat-retention' }), config.threatRetentionDays);
  // Webhook deliveries: every instance sends from the durable queue; claims are atomic.
  const webhooks = new WebhookWorker({ repos: deps.repos, clock: deps.clock, logger: logger.child({ component: 'webhooks' }), config });
  webhooks.start();
  const webhookRetention = createWebhookRetention(deps);
  webhookRetention.start();

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    // No new job is claimed from now on; a job in hand finishes (or its lease lets another instance retry it).
    const jobsStopped = jobs.stop();
    const sweepsStopped = auditRetention.stop();
    const retentionStopped = stopThreatRetention();
    const webhooksStopped = webhooks.stop();
    const webhookSweepStopped = webhookRetention.stop();
    // Stop accepting; in-flight requests finish; idle keep-alive sockets are closed now instead of lingering.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const force = setTimeout(() => server.closeAllConnections(), 25_000);
    await closed;
    clearTimeout(force);
    await stopGraphql();
    await jobsStopped;
    await sweepsStopped;
    await retentionStopped;
    await webhooksStopped;
    await webhookSweepStopped;
    await closeDeps(deps);
    await database.stop();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((error) => {
  process.stderr.write(`shieldgate: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
