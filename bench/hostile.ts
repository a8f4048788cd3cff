/**
 * npm run bench:hostile: the full hostile corpus (test/hostile/corpus.ts) uploaded to a running service while
 * autocannon loads GET /v1/whoami. Prints the API's p99 before and during, each hostile scan's time and verdict, and
 * the memory the service process gained while each was analysed (its scan worker is a thread of that process, so
 * that growth is the worker's heap and buffers). Targets: p99 during <= 1.5x p99 before; the service never crashes.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { MongoClient } from 'mongodb';
import { benchMongo, benchRedis, fmt, freePort, spawnTs, stopChild, waitForHttp } from './support';
import { buildHostileCorpus, type HostileCase } from '../test/hostile/corpus';
import { cleanupFixtures } from '../test/fixtures/build-packages';
import { seedUploadApp } from './seed-app';

const CONNECTIONS = 16;
const BEFORE_S = Number(process.env.BENCH_SECONDS ?? 10);
const P99_RATIO_TARGET = 1.5;
const KEYS = 20;
const COMMIT = 'a94a8fe5ccb19ba61c4c0873d391e987982fbbd3';
const MB = 1024 * 1024;

const untyped = (value: unknown): any => value;

type ScanRow = { name: string; bytes: number; seconds: number; grade: string; finding: string; rssGrowthMb: number };

function procStatusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}

/** Loads GET /v1/whoami; `stop()` ends the run early and `result` still resolves with its figures. */
function whoamiLoad(url: string, keys: string[], duration: number): { stop(): void; result: Promise<autocannon.Result> } {
  let i = 0;
  let instance: autocannon.Instance | null = null;
  const result = new Promise<autocannon.Result>((resolve, reject) => {
    instance = autocannon(
      {
        url,
        connections: CONNECTIONS,
        duration,
        requests: [{ setupRequest: (req: any) => ({ ...req, headers: { authorization: `Bearer ${keys[i++ % keys.length]}` } }) }],
      },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
  });
  return { stop: () => instance?.stop(), result };
}

function put(url: string, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'PUT', headers: { 'content-type': 'application/octet-stream', 'content-length': String(body.length) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Uploads one case and waits for its static scan; measures the service's RSS growth meanwhile. */
async function scanOne(base: string, key: string, pid: number, c: HostileCase): Promise<ScanRow> {
  const bytes = fs.readFileSync(c.file);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const created = await fetch(`${base}/v1/builds`, {
    method: 'POST', headers, body: JSON.stringify({ platform: c.platform, version: '1.0.0', commit: COMMIT, artifact: { sizeBytes: bytes.length, sha256 } }),
  });
  if (created.status !== 201) throw new Error(`${c.name}: createBuild answered ${created.status}`);
  const build = untyped(await created.json());
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5'); // VmHWM restarts from the current RSS
  } catch {
    /* not permitted: the samples below still see the peak, less precisely */
  }
  const baseline = procStatusKb(pid, 'VmRSS');
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, procStatusKb(pid, 'VmRSS'))), 10);
  try {
    const status = await put(build.artifact.uploadUrl, bytes);
    if (status !== 200) throw new Error(`${c.name}: upload answered ${status}`);
    const uploaded = Date.now();
    for (;;) {
      const b = untyped(await (await fetch(`${base}/v1/builds/${build.id}`, { headers })).json());
      const ref = b.scans.find((s: { engine: string }) => s.engine === 'static');
      if (ref) {
        const seconds = (Date.now() - uploaded) / 1000;
        const scan = untyped(await (await fetch(`${base}/v1/scans/${ref.id}`, { headers })).json());
        const worst = scan.findings.find((f: { severity: string }) => f.severity === 'critical') ?? scan.findings.find((f: { severity: string }) => f.severity === 'high');
        peak = Math.max(peak, procStatusKb(pid, 'VmHWM'));
        return { name: c.name, bytes: c.bytes, seconds, grade: scan.grade, finding: worst ? `${worst.id} (${worst.severity})` : 'none high', rssGrowthMb: (peak - baseline) / 1024 };
      }
      if (Date.now() - uploaded > 300_000) throw new Error(`${c.name}: no static scan after 300 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    clearInterval(sampler);
  }
}

async function main(): Promise<void> {
  console.log('building the hostile corpus (aapt, apksigner, plistutil and the zip writer)...');
  const corpus = await buildHostileCorpus('full');
  const mongo = await benchMongo();
  const redis = await benchRedis();
  const dbName = `bench_hostile_${Date.now()}`;
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const artifactDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-hostile-artifacts-'));

  const client = new MongoClient(mongo.uri);
  await client.connect();
  const { readers: keys, writer } = await seedUploadApp(client, { MONGODB_URI: mongo.uri, MONGODB_DATABASE: dbName, ARTIFACT_DIR: artifactDir }, KEYS);

  // The service's own defaults for the scan workers (SCAN_WORKERS, SCAN_WORKER_MEMORY_MB, SCAN_DEADLINE_S).
  const service = spawnTs('src/main.ts', {
    MONGODB_URI: mongo.uri, MONGODB_DATABASE: dbName, REDIS_URL: redis.url, LOG_LEVEL: 'warn', ARTIFACT_STORE: 'fs', ARTIFACT_DIR: artifactDir,
    PORT: String(port), PUBLIC_BASE_URL: base,
  });
  let crashed: string | null = null;
  service.once('exit', (code, signal) => (crashed = `service exited (code ${code}, signal ${signal})`));
  try {
    await waitForHttp(`${base}/healthz`);
    const pid = service.pid!;
    await whoamiLoad(`${base}/v1/whoami`, keys, 2).result; // warm-up: JIT, connection pools
    const before = await whoamiLoad(`${base}/v1/whoami`, keys, BEFORE_S).result;

    // During: the load runs until every hostile scan is over, then stops.
    const during = whoamiLoad(`${base}/v1/whoami`, keys, 3600);
    const rows: ScanRow[] = [];
    const startedAll = Date.now();
    try {
      for (const c of corpus) {
        if (crashed) break;
        rows.push(await scanOne(base, writer, pid, c));
      }
    } finally {
      during.stop();
    }
    const duringStats = await during.result;
    const peakRssMb = procStatusKb(pid, 'VmRSS') / 1024;

    console.log(`bench:hostile: ${corpus.length} hostile packages, ${CONNECTIONS} connections on GET /v1/whoami, ${os.cpus().length} cores, load average ${os.loadavg().map((l) => fmt(l, 2)).join(' ')}`);
    for (const r of rows) {
      console.log(`  ${r.name.padEnd(26)} ${fmt(r.bytes / MB, 2).padStart(7)} MB  scan ${fmt(r.seconds, 2).padStart(6)} s  grade ${r.grade.padEnd(2)}  ${r.finding.padEnd(34)} service RSS +${fmt(r.rssGrowthMb, 1)} MB`);
    }
    const worker = Math.max(...rows.map((r) => r.rssGrowthMb));
    console.log(`scans: ${rows.length} in ${fmt((Date.now() - startedAll) / 1000, 1)} s; largest RSS growth while one was analysed (scan worker heap + buffers): ${fmt(worker, 1)} MB; service RSS after: ${fmt(peakRssMb, 1)} MB`);
    console.log(`whoami before: ${fmt(before.requests.average)} req/s, p99 ${before.latency.p99} ms, non-2xx ${before.non2xx}, errors ${before.errors}`);
    console.log(`whoami during: ${fmt(duringStats.requests.average)} req/s, p99 ${duringStats.latency.p99} ms, non-2xx ${duringStats.non2xx}, errors ${duringStats.errors}`);
    const ratio = duringStats.latency.p99 / Math.max(before.latency.p99, 1);
    const allF = rows.length === corpus.length && rows.every((r) => r.grade === 'F' && r.finding !== 'none high');
    console.log(`p99 during/before: ${fmt(ratio, 2)} (target <= ${P99_RATIO_TARGET}: ${ratio <= P99_RATIO_TARGET ? 'met' : 'NOT met'})`);
    console.log(`service crashed: ${crashed ?? 'no'}; every hostile scan graded F with a high or critical finding: ${allF ? 'yes' : 'NO'}`);
    if (ratio > P99_RATIO_TARGET || crashed || !allF) process.exitCode = 1;
  } finally {
    await stopChild(service);
    await client.db(dbName).dropDatabase().catch(() => undefined);
    await client.close();
    await redis.stop();
    await mongo.stop();
    await cleanupFixtures();
    fs.rmSync(artifactDir, { recursive: true, force: true });
    fs.rmSync(path.dirname(corpus[0].file), { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
