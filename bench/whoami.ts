/**
 * npm run bench: GET /v1/whoami with an API key through the whole service, against a floor that does the same
 * essential work with nothing else: a bare node:http server that looks the key up in the same database, checks the
 * secret hash and increments the same kind of Redis counter. Target: service >= 0.75 of the floor at 32 connections.
 */
import autocannon from 'autocannon';
import { MongoClient } from 'mongodb';
import { benchMongo, benchRedis, fmt, freePort, spawnTs, stopChild, waitForHttp } from './support';
import { loadConfig } from '../src/core/config';
import { createDeps, closeDeps } from '../src/bootstrap';
import { createLogger } from '../src/core/logger';
import { createApp } from '../src/services/apps-service';
import { createApiKey } from '../src/services/keys-service';
import { operatorContext } from '../src/services/operator-context';

const CONNECTIONS = 32;
const DURATION_S = Number(process.env.BENCH_SECONDS ?? 10);
const KEYS = 40; // spread over keys so no bucket reaches its limit during the run

async function load(url: string, keys: string[]): Promise<{ rps: number; p99: number; non2xx: number }> {
  let i = 0;
  const run = async (duration: number) =>
    autocannon({
      url,
      connections: CONNECTIONS,
      duration,
      requests: [{ setupRequest: (req: any) => ({ ...req, headers: { authorization: `Bearer ${keys[i++ % keys.length]}` } }) }],
    });
  await run(2); // warm-up: JIT, connection pools
  const result = await run(DURATION_S);
  return { rps: result.requests.average, p99: result.latency.p99, non2xx: result.non2xx };
}

async function main(): Promise<void> {
  const mongo = await benchMongo();
  const redis = await benchRedis();
  const dbName = `bench_${Date.now()}`;
  const servicePort = await freePort();
  const floorPort = await freePort();

  // Seed one app and its keys through the services (what the CLI does).
  const client = new MongoClient(mongo.uri);
  await client.connect();
  const seedConfig = loadConfig({ MONGODB_URI: mongo.uri, MONGODB_DATABASE: dbName });
  const deps = await createDeps(seedConfig, { mongo: client, logger: createLogger('silent') });
  const app = await createApp(operatorContext(deps), { name: 'bench', plan: 'enterprise' });
  const keys: string[] = [];
  for (let k = 0; k < KEYS; k++) keys.push((await createApiKey(operatorContext(deps), { appId: app._id, scopes: ['builds:read'], mode: 'live' })).key);
  await closeDeps(deps, { closeMongo: false });

  const env = { MONGODB_URI: mongo.uri, MONGODB_DATABASE: dbName, REDIS_URL: redis.url, LOG_LEVEL: 'warn' };
  const service = spawnTs('src/main.ts', { ...env, PORT: String(servicePort) });
  const floor = spawnTs('bench/whoami-floor.ts', { ...env, PORT: String(floorPort) });
  try {
    await waitForHttp(`http://127.0.0.1:${servicePort}/healthz`);
    await waitForHttp(`http://127.0.0.1:${floorPort}/healthz`);
    const check = await fetch(`http://127.0.0.1:${servicePort}/v1/whoami`, { headers: { authorization: `Bearer ${keys[0]}` } });
    if (check.status !== 200) throw new Error(`service whoami answered ${check.status}`);

    const floorResult = await load(`http://127.0.0.1:${floorPort}/v1/whoami`, keys);
    const serviceResult = await load(`http://127.0.0.1:${servicePort}/v1/whoami`, keys);
    const ratio = serviceResult.rps / floorResult.rps;
    console.log(`whoami benchmark: ${CONNECTIONS} connections, ${DURATION_S} s, MongoDB-compatible server + redis-server on loopback`);
    console.log(`floor   (node:http + key lookup + redis INCR): ${fmt(floorResult.rps)} req/s, p99 ${floorResult.p99} ms, non-2xx ${floorResult.non2xx}`);
    console.log(`service (GET /v1/whoami, full stack)        : ${fmt(serviceResult.rps)} req/s, p99 ${serviceResult.p99} ms, non-2xx ${serviceResult.non2xx}`);
    console.log(`ratio service/floor: ${fmt(ratio, 2)} (target >= 0.75: ${ratio >= 0.75 ? 'met' : 'NOT met'})`);
  } finally {
    await stopChild(service);
    await stopChild(floor);
    await client.db(dbName).dropDatabase().catch(() => undefined);
    await client.close();
    await redis.stop();
    await mongo.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
