/**
 * bench:scan part 5, scans in volume: N small real APKs of one app (built by aapt, zipalign and apksigner, of 10
 * package names, every build a release build) uploaded at once to a running service (child process, its default
 * one scan worker, FerretDB), against the same analyses run back to back in one analysis worker here. Figure:
 * (N / time from the first upload's end to the last scan) over (N / time back to back). Target >= 0.7: deferrals,
 * wakes and queue reads cost under 30% of the analyses themselves. Also prints the deferrals per job.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { ScanWorkers } from '../src/scan/worker/analyze-in-worker';
import { androidManifest, buildApk } from '../test/fixtures/build-packages';
import { seedUploadApp } from './seed-app';
import { benchMongo, benchRedis, fmt, freePort, putFile, sha256File, spawnTs, stopChild, waitForHttp } from './support';

const N = Number(process.env.BENCH_FLOW_PACKAGES ?? 60);
const TARGET = 0.7;
const COMMIT = 'a94a8fe5ccb19ba61c4c0873d391e987982fbbd3';
/** Uploads in flight at once: the most an app's plan allows (the service answers 409 beyond). */
const IN_FLIGHT = 4;

export async function flowPart(check: (label: string, ok: boolean) => void): Promise<void> {
  console.log(`building ${N} packages of 10 names (aapt, zipalign, apksigner)...`);
  const files: string[] = [];
  for (let i = 0; i < N; i++) {
    const activities = Array.from({ length: 1 + (Math.floor(i / 10) % 3) }, (_, k) => `<activity android:name=".A${k}" android:exported="true"/>`).join('');
    files.push(await buildApk({ manifest: androidManifest({ packageName: `com.example.flow${i % 10}`, versionName: `1.0.${i}`, minSdk: 24, targetSdk: 35, body: activities }), sign: 'release' }));
  }
  // The reference: the same analyses back to back in one analysis worker (a fresh worker thread each, as the service runs them).
  const workers = new ScanWorkers({ workers: 1, memoryMb: 512, deadlineMs: 60_000 });
  const t0 = Date.now();
  for (const file of files) await workers.analyze(file, 'android', new Date());
  const sequentialS = (Date.now() - t0) / 1000;

  const mongo = await benchMongo();
  const redis = await benchRedis();
  const dbName = `bench_flow_${Date.now()}`;
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const artifactDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-flow-artifacts-'));
  const client = new MongoClient(mongo.uri);
  await client.connect();
  let service: ReturnType<typeof spawnTs> | null = null;
  try {
    const { writer } = await seedUploadApp(client, { MONGODB_URI: mongo.uri, MONGODB_DATABASE: dbName, ARTIFACT_DIR: artifactDir }, 1, true);
    service = spawnTs('src/main.ts', {
      MONGODB_URI: mongo.uri, MONGODB_DATABASE: dbName, REDIS_URL: redis.url, LOG_LEVEL: 'warn', ARTIFACT_STORE: 'fs', ARTIFACT_DIR: artifactDir,
      PORT: String(port), PUBLIC_BASE_URL: base,
    });
    await waitForHttp(`${base}/healthz`);
    const headers = { authorization: `Bearer ${writer}`, 'content-type': 'application/json' };
    let firstUploaded = 0;
    let lastUploaded = 0;
    const queue = files.map((file, i) => ({ file, i }));
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        for (let next = queue.shift(); next; next = queue.shift()) {
          const body = JSON.stringify({ platform: 'android', version: `1.0.${next.i}`, commit: COMMIT, artifact: { sizeBytes: fs.statSync(next.file).size, sha256: await sha256File(next.file) } });
          const created = await fetch(`${base}/v1/builds`, { method: 'POST', headers, body });
          if (created.status !== 201) throw new Error(`createBuild answered ${created.status}: ${await created.text()}`);
          const put = await putFile(((await created.json()) as { artifact: { uploadUrl: string } }).artifact.uploadUrl, next.file);
          if (put.status !== 200) throw new Error(`upload answered ${put.status}: ${put.body}`);
          firstUploaded ||= Date.now();
          lastUploaded = Date.now();
        }
      }),
    );
    const jobs = client.db(dbName).collection<{ state: string; deferrals?: number }>('scan_jobs');
    for (const until = Date.now() + 30 * 60_000; (await jobs.countDocuments({ state: { $in: ['done', 'failed'] } })) < N; ) {
      if (Date.now() > until) throw new Error('the scans did not end within 30 minutes');
      // Every count reads each matching job on the embedded database: polled often, it would take CPU from the scans.
      await new Promise((r) => setTimeout(r, 250));
    }
    const flowS = (Date.now() - firstUploaded) / 1000;
    const deferrals = (await jobs.find({}).toArray()).map((j) => j.deferrals ?? 0);
    const ratio = sequentialS / flowS;
    console.log(`scan flow: ${N} uploads of one app scanned in ${fmt(flowS, 1)} s (${fmt(N / flowS, 2)} scans/s); back to back in one worker ${fmt(sequentialS, 1)} s (${fmt(N / sequentialS, 2)} scans/s)`);
    console.log(`scan flow: the uploads ended ${fmt((lastUploaded - firstUploaded) / 1000, 1)} s after the first`);
    console.log(`scan flow: deferrals per job: max ${Math.max(...deferrals)}, total ${deferrals.reduce((a, b) => a + b, 0)}`);
    check(`scan flow: scans/s of ${N} uploads at once over back to back = ${fmt(ratio, 2)}, target >= ${TARGET}`, ratio >= TARGET);
  } finally {
    if (service) await stopChild(service);
    await client.db(dbName).dropDatabase().catch(() => undefined);
    await client.close();
    await redis.stop();
    await mongo.stop();
    fs.rmSync(artifactDir, { recursive: true, force: true });
  }
}
