/**
 * npm run bench:client: a 500 MB upload by shieldgate-ci's upload step (streamed PUT with progress, as the command
 * runs it) against `curl -T` of the same file, each to a fresh upload URL of the same service (a separate process).
 * Prints MB/s of each, the ratio client/curl, and the client's peak RSS growth during its upload (this process's
 * VmHWM, reset just before). Targets: >= 0.9 of curl's throughput, RSS growth < 64 MB.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { execFileSync } from 'node:child_process';
import { MongoClient } from 'mongodb';
import { benchMongo, fmt, freePort, makeRandomFile, spawnTs, stopChild, waitForHttp } from './support';
import { loadConfig } from '../src/config';
import { createDeps, closeDeps } from '../src/bootstrap';
import { createLogger } from '../src/logger';
import { createApp } from '../src/services/apps-service';
import { createApiKey } from '../src/services/keys-service';
import { apiKeyCredential, call, createApiClient, createProgress, uploadArtifact, type Build } from '../client/src';

const SIZE = Number(process.env.BENCH_UPLOAD_BYTES ?? 500 * 1024 * 1024);
/** curl and the client alternate, so a noisy neighbour hits both alike. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const MB = 1024 * 1024;

function selfKb(field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) : 0;
}

/** Growth of this process's peak RSS over its RSS just before `fn`. */
async function withRssWatch<T>(fn: () => Promise<T>): Promise<{ result: T; growthMb: number }> {
  global.gc?.();
  try {
    fs.writeFileSync('/proc/self/clear_refs', '5'); // resets VmHWM to the current RSS
  } catch {
    /* not permitted: the samples below still see the peak, less precisely */
  }
  const baseline = selfKb('VmRSS');
  let peak = baseline;
  const timer = setInterval(() => (peak = Math.max(peak, selfKb('VmRSS'))), 10);
  try {
    const result = await fn();
    peak = Math.max(peak, selfKb('VmHWM'));
    return { result, growthMb: (peak - baseline) / 1024 };
  } finally {
    clearInterval(timer);
  }
}

function clearArtifacts(dir: string): void {
  for (const entry of fs.readdirSync(dir)) if (entry !== '.staging') fs.rmSync(path.join(dir, entry), { recursive: true, force: true });
}

async function main(): Promise<void> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-client-'));
  const artifactDir = path.join(work, 'artifacts');
  fs.mkdirSync(artifactDir);
  const file = path.join(work, 'artifact.bin');
  const mongo = await benchMongo();
  const dbName = `bench_client_${Date.now()}`;
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const env = { MONGODB_URI: mongo.uri, MONGODB_DATABASE: dbName, ARTIFACT_DIR: artifactDir, ARTIFACT_STORE: 'fs', LOG_LEVEL: 'warn' };
  const service = spawnTs('src/main.ts', { ...env, PORT: String(port), PUBLIC_BASE_URL: baseUrl });
  const mongoClient = new MongoClient(mongo.uri);
  try {
    console.log(`bench:client: preparing ${fmt(SIZE / MB, 0)} MB of random bytes in ${work}`);
    const sha256 = makeRandomFile(file, SIZE);
    await mongoClient.connect();
    const deps = await createDeps(loadConfig({ ...env }), { mongo: mongoClient, logger: createLogger('silent') });
    const app = await createApp(deps, { name: 'bench', plan: 'enterprise' });
    const { key } = await createApiKey(deps, { appId: app._id, scopes: ['builds:write', 'builds:read'], mode: 'live' });
    await closeDeps(deps, { closeMongo: false });
    await waitForHttp(`${baseUrl}/healthz`);

    const api = createApiClient(baseUrl);
    const credential = apiKeyCredential(key);
    let round = 0;
    const register = async (): Promise<Build> =>
      (await call('register', credential, (headers) => api.POST('/v1/builds', { body: { platform: 'android', version: `1.0.${round++}`, artifact: { sizeBytes: SIZE, sha256 } }, headers }))).data;
    const sink = new Writable({ write: (_c, _e, done) => done() });

    const curlSeconds: number[] = [];
    const clientSeconds: number[] = [];
    let growthMb = 0;
    for (let i = 0; i < ROUNDS; i++) {
      const forCurl = await register();
      const out = execFileSync('curl', ['-sS', '-T', file, '-H', 'content-type: application/octet-stream', '-o', '/dev/null', '-w', '%{http_code} %{time_total}', forCurl.artifact!.uploadUrl!], { encoding: 'utf8' });
      const [status, seconds] = out.trim().split(' ');
      if (status !== '200') throw new Error(`curl upload answered ${status}`);
      curlSeconds.push(Number(seconds));
      clearArtifacts(artifactDir);

      const forClient = await register();
      const watched = await withRssWatch(async () => {
        const started = process.hrtime.bigint();
        await uploadArtifact({ api, credential, build: forClient, file, progress: createProgress(SIZE, sink, false), log: (line) => console.log(line) });
        return Number(process.hrtime.bigint() - started) / 1e9;
      });
      clientSeconds.push(watched.result);
      growthMb = Math.max(growthMb, watched.growthMb);
      clearArtifacts(artifactDir);
    }

    const mbps = (seconds: number) => SIZE / MB / seconds;
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const curlMbps = mbps(median(curlSeconds));
    const clientMbps = mbps(median(clientSeconds));
    const ratio = clientMbps / curlMbps;
    const list = (xs: number[]) => xs.map((x) => fmt(mbps(x))).join(', ');
    console.log(`bench:client: ${fmt(SIZE / MB, 0)} MB x ${ROUNDS} rounds, Node ${process.version}, ${os.cpus().length} cores, load average ${os.loadavg().map((l) => fmt(l, 2)).join(' ')}`);
    console.log(`curl -T       : ${fmt(curlMbps)} MB/s median (rounds: ${list(curlSeconds)})`);
    console.log(`shieldgate-ci : ${fmt(clientMbps)} MB/s median (rounds: ${list(clientSeconds)})`);
    console.log(`ratio client/curl: ${fmt(ratio, 2)} (target >= 0.90: ${ratio >= 0.9 ? 'met' : 'NOT met'})`);
    console.log(`client peak RSS growth during an upload: ${fmt(growthMb)} MB (target < 64 MB: ${growthMb < 64 ? 'met' : 'NOT met'})`);
  } finally {
    await stopChild(service);
    await mongoClient.db(dbName).dropDatabase().catch(() => undefined);
    await mongoClient.close();
    await mongo.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().then(() => process.exit(0), (error) => {
  console.error(error);
  process.exit(1);
});
