/**
 * npm run bench:upload: one 500 MB artifact PUT through the whole service (token check, upload lock, verifying
 * stream, artifact store, conditional update), against the floor of the same run: `sha256sum` of the same bytes, and
 * a bare node:http handler that hashes and writes to the same store (bench/upload-floor.ts). Prints MB/s of each,
 * the ratio service/floor and the service's peak RSS growth during the upload (its VmHWM, reset just before).
 * Targets: >= 0.7 of the floor's throughput, peak RSS growth < 64 MB.
 * `npm run bench:upload -- --s3` runs both against a local S3 server (versitygw) instead of the filesystem store.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { execFileSync } from 'node:child_process';
import { MongoClient } from 'mongodb';
import { benchMongo, fmt, freePort, makeRandomFile, spawnTs, stopChild, waitForHttp } from './support';
import { loadConfig } from '../src/core/config';
import { createDeps, closeDeps } from '../src/bootstrap';
import { createLogger } from '../src/core/logger';
import { createApp } from '../src/services/apps-service';
import { createApiKey } from '../src/services/keys-service';
import { operatorContext } from '../src/services/operator-context';

const untyped = (value: unknown): any => value;
const SIZE = Number(process.env.BENCH_UPLOAD_BYTES ?? 500 * 1024 * 1024);
/** Floor and service alternate, so a noisy neighbour (page-cache writeback, other processes) hits both alike. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const MB = 1024 * 1024;
const useS3 = process.argv.includes('--s3');

/** PUTs the file; resolves with the seconds from the first byte sent to the answer. */
function putFile(url: string, file: string): Promise<{ status: number; seconds: number; body: string }> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = http.request(url, { method: 'PUT', headers: { 'content-type': 'application/octet-stream', 'content-length': String(SIZE) } }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, seconds: Number(process.hrtime.bigint() - started) / 1e9, body }));
    });
    req.on('error', reject);
    fs.createReadStream(file, { highWaterMark: MB }).pipe(req);
  });
}

function procStatusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}

/** Runs `fn` while watching a process's memory: growth of its peak RSS over the RSS it had just before. */
async function withRssWatch<T>(pid: number, fn: () => Promise<T>): Promise<{ result: T; growthMb: number }> {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5'); // resets VmHWM to the current RSS
  } catch {
    /* not permitted: the samples below still see the peak, less precisely */
  }
  const baseline = procStatusKb(pid, 'VmRSS');
  let peak = baseline;
  const timer = setInterval(() => (peak = Math.max(peak, procStatusKb(pid, 'VmRSS'))), 10);
  try {
    const result = await fn();
    peak = Math.max(peak, procStatusKb(pid, 'VmHWM'));
    return { result, growthMb: (peak - baseline) / 1024 };
  } finally {
    clearInterval(timer);
  }
}

/** Empties the artifact folder between runs (the bench measures throughput, not disk usage). */
function clearArtifacts(dir: string): void {
  for (const entry of fs.readdirSync(dir)) if (entry !== '.staging') fs.rmSync(path.join(dir, entry), { recursive: true, force: true });
}

/** SIGTERM, then SIGKILL if the process has not exited within 5 s. */
async function stopHard(child: ReturnType<typeof spawnTs>): Promise<void> {
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await stopChild(child);
  clearTimeout(timer);
}

async function startS3(): Promise<{ env: Record<string, string>; stop(): Promise<void> }> {
  const { startS3: start } = await import('../test/bed/servers');
  const s3 = await start();
  return {
    env: { ARTIFACT_STORE: 's3', S3_BUCKET: 'bench', S3_ENDPOINT: s3.endpoint, S3_REGION: s3.region, S3_ACCESS_KEY_ID: s3.accessKeyId, S3_SECRET_ACCESS_KEY: s3.secretAccessKey },
    stop: () => s3.stop(),
  };
}

async function main(): Promise<void> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-upload-'));
  const artifactDir = path.join(work, 'artifacts');
  fs.mkdirSync(artifactDir);
  const file = path.join(work, 'artifact.bin');
  const mongo = await benchMongo();
  const s3 = useS3 ? await startS3() : null;
  const dbName = `bench_upload_${Date.now()}`;
  const [servicePort, floorPort] = [await freePort(), await freePort()];
  const storeEnv = s3?.env ?? { ARTIFACT_STORE: 'fs' };
  const env = { MONGODB_URI: mongo.uri, MONGODB_DATABASE: dbName, ARTIFACT_DIR: artifactDir, LOG_LEVEL: 'warn', ...storeEnv };
  const service = spawnTs('src/main.ts', { ...env, PORT: String(servicePort), PUBLIC_BASE_URL: `http://127.0.0.1:${servicePort}` });
  const floor = spawnTs('bench/upload-floor.ts', { ...env, PORT: String(floorPort) });
  const client = new MongoClient(mongo.uri);
  try {
    console.log(`bench:upload: preparing ${fmt(SIZE / MB, 0)} MB of random bytes in ${work}`);
    const sha256 = makeRandomFile(file, SIZE);

    const t0 = process.hrtime.bigint();
    const sum = execFileSync('sha256sum', [file], { encoding: 'utf8' }).split(' ')[0];
    const sumSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
    if (sum !== sha256) throw new Error('sha256sum disagrees with node:crypto');

    await client.connect();
    const deps = await createDeps(loadConfig({ MONGODB_URI: mongo.uri, MONGODB_DATABASE: dbName, ARTIFACT_DIR: artifactDir }), { mongo: client, logger: createLogger('silent') });
    const app = await createApp(operatorContext(deps), { name: 'bench', plan: 'enterprise' });
    const { key } = await createApiKey(operatorContext(deps), { appId: app._id, scopes: ['builds:write', 'builds:read'], mode: 'live' });
    await closeDeps(deps, { closeMongo: false });

    await waitForHttp(`http://127.0.0.1:${servicePort}/healthz`);
    await waitForHttp(`http://127.0.0.1:${floorPort}/healthz`);

    const floorSeconds: number[] = [];
    const serviceSeconds: number[] = [];
    let growthMb = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const floorRun = await putFile(`http://127.0.0.1:${floorPort}/upload`, file);
      if (floorRun.status !== 200 || untyped(JSON.parse(floorRun.body)).sha256 !== sha256) throw new Error(`floor answered ${floorRun.status}`);
      floorSeconds.push(floorRun.seconds);
      clearArtifacts(artifactDir);

      const created = await fetch(`http://127.0.0.1:${servicePort}/v1/builds`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ platform: 'android', version: `1.0.${round}`, artifact: { sizeBytes: SIZE, sha256 } }),
      });
      if (created.status !== 201) throw new Error(`createBuild answered ${created.status}: ${await created.text()}`);
      const build = await created.json().then(untyped);
      const watched = await withRssWatch(service.pid!, () => putFile(build.artifact.uploadUrl, file));
      if (watched.result.status !== 200) throw new Error(`upload answered ${watched.result.status}: ${watched.result.body}`);
      serviceSeconds.push(watched.result.seconds);
      growthMb = Math.max(growthMb, watched.growthMb);
      clearArtifacts(artifactDir);
    }

    const mbps = (seconds: number) => SIZE / MB / seconds;
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const floorMbps = mbps(median(floorSeconds));
    const serviceMbps = mbps(median(serviceSeconds));
    const ratio = serviceMbps / floorMbps;
    const list = (xs: number[]) => xs.map((x) => fmt(mbps(x))).join(', ');
    console.log(`bench:upload: ${fmt(SIZE / MB, 0)} MB x ${ROUNDS} rounds, store ${storeEnv.ARTIFACT_STORE}, ${os.cpus().length} cores, load average ${os.loadavg().map((l) => fmt(l, 2)).join(' ')}`);
    console.log(`sha256sum of the file                         : ${fmt(mbps(sumSeconds))} MB/s`);
    console.log(`floor   (node:http + sha256 + same store)      : ${fmt(floorMbps)} MB/s median (rounds: ${list(floorSeconds)})`);
    console.log(`service (PUT /v1/uploads/{token}, full stack)  : ${fmt(serviceMbps)} MB/s median (rounds: ${list(serviceSeconds)})`);
    console.log(`ratio service/floor: ${fmt(ratio, 2)} (target >= 0.70: ${ratio >= 0.7 ? 'met' : 'NOT met'}); service/sha256sum: ${fmt(serviceMbps / mbps(sumSeconds), 2)}`);
    console.log(`service peak RSS growth during an upload: ${fmt(growthMb)} MB (target < 64 MB: ${growthMb < 64 ? 'met' : 'NOT met'})`);
  } finally {
    await stopHard(service);
    await stopHard(floor);
    await client.db(dbName).dropDatabase().catch(() => undefined);
    await client.close();
    await s3?.stop();
    await mongo.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().then(() => process.exit(0), (error) => {
  console.error(error);
  process.exit(1);
});
