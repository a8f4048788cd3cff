/**
 * npm run bench:client: a 500 MB upload by shieldgate-ci's upload step against `curl -T` of the same file, each to a
 * fresh upload URL of the same service. Each is its own process, as in a CI job: curl, and bench/client-step.ts
 * running the compiled client (client/dist) the way the command does (streamed PUT, progress lines, retries).
 * A bare Node pipe (fs read stream into an http PUT, also its own process) runs as a reference for Node's floor.
 * They take turns over the rounds, so a busy neighbour hits all alike; prints every round, the
 * medians, the ratio client/curl, the client process's peak RSS growth over its RSS just before the upload (VmHWM),
 * and the load average. Targets: >= 0.9 of curl's throughput, RSS growth < 64 MB.
 * Knobs: BENCH_UPLOAD_BYTES (default 500 MiB), BENCH_ROUNDS (default 5), BENCH_CLIENT_PROFILE=DIR (a V8 CPU profile
 * of each client run), BENCH_CLIENT_DIST=DIR (another build of client/dist, to compare a change with the old code).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile, spawn } from 'node:child_process';
import { MongoClient } from 'mongodb';
import { benchMongo, fmt, freePort, makeRandomFile, spawnTs, stopChild, waitForHttp } from './support';
import { loadConfig } from '../src/core/config';
import { createDeps, closeDeps } from '../src/bootstrap';
import { createLogger } from '../src/core/logger';
import { REPO_ROOT } from '../src/core/paths';
import { createApp } from '../src/services/apps-service';
import { createApiKey } from '../src/services/keys-service';
import { apiKeyCredential, call, createApiClient, type Build } from '../client/src';
import { operatorContext } from '../src/services/operator-context';

const SIZE = Number(process.env.BENCH_UPLOAD_BYTES ?? 500 * 1024 * 1024);
/** curl and the client alternate, so a noisy neighbour hits both alike. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const MB = 1024 * 1024;

const loadAverage = () => os.loadavg().map((l) => fmt(l, 2)).join(' ');

/** curl's own transfer time (time_total) and the CPU time of its process (GNU time). */
function curlUpload(file: string, url: string): Promise<{ seconds: number; cpuSeconds: number }> {
  return new Promise((resolve, reject) => {
    const args = ['-f', '%U %S', 'curl', '-sS', '-T', file, '-H', 'content-type: application/octet-stream', '-o', '/dev/null', '-w', '%{http_code} %{time_total}', url];
    execFile('/usr/bin/time', args, { encoding: 'utf8' }, (error, out, err) => {
      if (error) return reject(error);
      const [status, seconds] = out.trim().split(' ');
      if (status !== '200') return reject(new Error(`curl upload answered ${status}`));
      const [user, system] = err.trim().split('\n').at(-1)!.split(' ').map(Number);
      resolve({ seconds: Number(seconds), cpuSeconds: user + system });
    });
  });
}

interface StepResult {
  seconds: number;
  cpuSeconds: number;
  baselineKb: number;
  peakKb: number;
}

/** One run of the client's upload step in its own process (bench/client-step.ts); `bare`: Node's floor instead. */
function clientUpload(input: { baseUrl: string; apiKey: string; build: Build; file: string }, work: string, bare = false): Promise<StepResult> {
  const inputFile = path.join(work, 'step.json');
  fs.writeFileSync(inputFile, JSON.stringify(input));
  return new Promise((resolve, reject) => {
    // BENCH_CLIENT_PROFILE=DIR writes a V8 CPU profile of each client run there (open it in Chrome's DevTools).
    const profile = process.env.BENCH_CLIENT_PROFILE ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(process.env.BENCH_CLIENT_PROFILE)] : [];
    const child = spawn(process.execPath, [...profile, '-r', 'tsx/cjs', path.join(REPO_ROOT, 'bench', 'client-step.ts'), inputFile, ...(bare ? ['--bare'] : [])], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`client step exited ${code}: ${err.trim().slice(-2000)}`));
      const progressLines = err.split('\n').filter((line) => line.startsWith('upload ')).length;
      if (!bare && progressLines < 10) return reject(new Error(`the client reported progress ${progressLines} times, not every 10 %`));
      resolve(JSON.parse(out.trim().split('\n').at(-1)!) as StepResult);
    });
  });
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
    const app = await createApp(operatorContext(deps), { name: 'bench', plan: 'enterprise' });
    const { key } = await createApiKey(operatorContext(deps), { appId: app._id, scopes: ['builds:write', 'builds:read'], mode: 'live' });
    await closeDeps(deps, { closeMongo: false });
    await waitForHttp(`${baseUrl}/healthz`);

    const api = createApiClient(baseUrl);
    const credential = apiKeyCredential(key);
    let round = 0;
    const register = async (): Promise<Build> =>
      (await call('register', credential, (headers) => api.POST('/v1/builds', { body: { platform: 'android', version: `1.0.${round++}`, artifact: { sizeBytes: SIZE, sha256 } }, headers }))).data;

    const loadBefore = loadAverage();
    type Who = 'curl' | 'client' | 'node';
    const seconds: Record<Who, number[]> = { curl: [], client: [], node: [] };
    const cpu: Record<Who, number[]> = { curl: [], client: [], node: [] };
    const growthMb: number[] = [];
    const mbps = (s: number) => SIZE / MB / s;
    const order: Who[] = ['curl', 'client', 'node'];
    for (let i = 0; i < ROUNDS; i++) {
      // Who goes first rotates too, so none always follows another's page-cache and disk write-back.
      for (const who of [...order.slice(i % 3), ...order.slice(0, i % 3)]) {
        const build = await register();
        if (who === 'curl') {
          const run = await curlUpload(file, build.artifact!.uploadUrl!);
          seconds.curl.push(run.seconds);
          cpu.curl.push(run.cpuSeconds);
        } else {
          const step = await clientUpload({ baseUrl, apiKey: key, build, file }, work, who === 'node');
          seconds[who].push(step.seconds);
          cpu[who].push(step.cpuSeconds);
          if (who === 'client') growthMb.push((step.peakKb - step.baselineKb) / 1024);
        }
        clearArtifacts(artifactDir);
      }
      console.log(
        `round ${i + 1}: curl ${fmt(mbps(seconds.curl[i]))} MB/s (CPU ${fmt(cpu.curl[i], 2)} s), shieldgate-ci ${fmt(mbps(seconds.client[i]))} MB/s (CPU ${fmt(cpu.client[i], 2)} s, RSS +${fmt(growthMb[i])} MB), ratio ${fmt(seconds.curl[i] / seconds.client[i], 2)}; bare Node pipe ${fmt(mbps(seconds.node[i]))} MB/s (CPU ${fmt(cpu.node[i], 2)} s); load average ${loadAverage()}`,
      );
    }

    const median = (xs: number[]) => {
      const sorted = [...xs].sort((a, b) => a - b);
      const mid = Math.floor(sorted.length / 2);
      return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    };
    const curlMbps = mbps(median(seconds.curl));
    const clientMbps = mbps(median(seconds.client));
    const ratio = clientMbps / curlMbps;
    const peakGrowth = Math.max(...growthMb);
    const roundRatios = (who: Who) => median(seconds.curl.map((c, i) => c / seconds[who][i]));
    console.log(`bench:client: ${fmt(SIZE / MB, 0)} MB x ${ROUNDS} rounds, Node ${process.version}, ${os.cpus().length} cores, load average ${loadBefore} before, ${loadAverage()} after`);
    console.log(`curl -T        : ${fmt(curlMbps)} MB/s median, CPU ${fmt(median(cpu.curl), 2)} s median`);
    console.log(`shieldgate-ci  : ${fmt(clientMbps)} MB/s median, CPU ${fmt(median(cpu.client), 2)} s median`);
    console.log(`bare Node pipe : ${fmt(mbps(median(seconds.node)))} MB/s median, CPU ${fmt(median(cpu.node), 2)} s median (a reference: Node's floor)`);
    console.log(`ratio client/curl: ${fmt(ratio, 2)} (target >= 0.90: ${ratio >= 0.9 ? 'met' : 'NOT met'}); median of the rounds' own ratios ${fmt(roundRatios('client'), 2)} (bare Node pipe: ${fmt(roundRatios('node'), 2)})`);
    console.log(`client process peak RSS growth during an upload: ${fmt(peakGrowth)} MB (target < 64 MB: ${peakGrowth < 64 ? 'met' : 'NOT met'})`);
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
