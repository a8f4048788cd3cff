// Protects: the scans of one app flow however many builds it sends at once (docs/scans.md). A finished analysis waits
// only for the unfinished earlier-registered release builds of its own package (or of one whose analysis has not read
// its package yet), and a job that ends wakes only the jobs that wait for it. 100 packages of 10 names uploaded to one
// app through two instances at once are all scanned within a bound scaled by their analysis time (measured here), each
// with the right baseline, no job woken more than a handful of times; a slow earlier build delays only the later
// builds of its own package, whose name is recorded as soon as its analysis has read its manifest.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { MongoClient } from 'mongodb';
import { startHarness, type Harness } from '../support/harness';
import { androidManifest, buildApk, cleanupFixtures, writeRawFile } from '../fixtures/build-packages';
import { createDeps, closeDeps } from '../../src/bootstrap';
import { createHttpApp } from '../../src/app';
import { createLogger } from '../../src/core/logger';
import { createJobRunner } from '../../src/jobs';
import type { Deps } from '../../src/core/deps';
import type { ScanJobDoc } from '../../src/data/scan-jobs-repo';
import { ScanWorkers } from '../../src/scan/worker/analyze-in-worker';
import { getBuild, getScan, slowPackage, uploadPackage } from './scans-support';

jest.setTimeout(600_000);

let h: Harness;
let second: { deps: Deps; baseUrl: string; close(): Promise<void> };
let appId: string;
let key: string; // a release key: every build here is a release build, so every scan is a later one's baseline

/** A second instance on the same database and artifact store: its own HTTP app, deps and (later) job runner. */
async function secondInstance(): Promise<typeof second> {
  const mongo = new MongoClient(process.env.TEST_MONGODB_URI!);
  await mongo.connect();
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const deps = await createDeps({ ...h.config, publicBaseUrl: baseUrl }, { clock: h.clock, mongo, logger: createLogger('silent') });
  const { app, stop } = await createHttpApp(deps);
  server.on('request', app);
  return {
    deps,
    baseUrl,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await stop();
      await closeDeps(deps);
    },
  };
}

beforeAll(async () => {
  // The slow package takes about 12 s of one core; on a machine loaded by the other suites that can pass the default
  // 60 s deadline, and a scan cut short is incomplete and never a baseline. These tests are about order, not speed.
  h = await startHarness({ jobs: false, env: { SCAN_DEADLINE_S: '600' } });
  second = await secondInstance();
  appId = (await h.newApp('scale')).appId;
  key = (await h.newKey(appId, ['builds:write', 'builds:read', 'scans:read'], 'live', { releaseBuilds: true })).key;
});
afterAll(async () => {
  await second.close();
  await h.close();
  await cleanupFixtures();
});

const exported = (name: string) => `<activity android:name=".${name}" android:exported="true"/>`;
/** A release-signed APK of `pkg` exporting the named activities (one finding each). */
const apk = (pkg: string, activities: string[]) =>
  buildApk({ manifest: androidManifest({ packageName: pkg, minSdk: 24, targetSdk: 35, body: activities.map(exported).join('') }), sign: 'release', schemes: { v1: false, v2: true, v3: false } });

const jobsCol = () => h.deps.db.collection<ScanJobDoc>('scan_jobs');
const jobOf = async (buildId: string) => (await jobsCol().findOne({ buildId }))!;
const staticScanOfBuild = async (buildId: string) => {
  const listed = (await getBuild(h, key, buildId)).scans.find((s: any) => s.engine === 'static');
  return listed ? (await getScan(h, key, listed.id)).body : null;
};
/** Uploads through the instance given (registration and bytes both), as a CI job talking to either would. */
const uploadThrough = (instance: 0 | 1, file: string) => uploadPackage(instance === 0 ? h : { ...h, api: (p, init) => fetch(`${second.baseUrl}${p}`, init) }, key, file, 'android');

it('scans 100 packages of 10 names sent at once through two instances, each against the right baseline, no job woken more than a few times', async () => {
  const names = Array.from({ length: 10 }, (_, i) => `com.example.flow${i}`);
  // Two variants per package, so that each scan's diff against its baseline says something.
  const files = await Promise.all(names.flatMap((pkg) => [apk(pkg, ['Alpha']), apk(pkg, ['Alpha', 'Beta'])]));
  // The work: the 20 packages analysed back to back in one worker, five times over for the 100 builds.
  const workers = new ScanWorkers({ workers: 1, memoryMb: h.config.scanIsolation.memoryMb, deadlineMs: 60_000 });
  const t0 = Date.now();
  for (const file of files) await workers.analyze(file, 'android', h.clock.now());
  const analysisMs = (Date.now() - t0) * 5;

  const runners = [createJobRunner(h.deps), createJobRunner(second.deps)];
  // The service clock moves with real time here, as in production: builds are registered at distinct times (mostly),
  // and a deferral's fallback wait (DEFER_MS) passes.
  const tick = setInterval(() => h.clock.advance(20), 20);
  const started = Date.now();
  for (const runner of runners) runner.start({ pollIntervalMs: 50 });
  // 100 builds: package i % 10, variant by round; four uploads in flight at once (the plan's most), alternating instances.
  const order = Array.from({ length: 100 }, (_, i) => ({ i, pkg: names[i % 10], file: files[(i % 10) * 2 + (Math.floor(i / 10) % 2)] }));
  const builds: Array<{ i: number; pkg: string; id: string }> = [];
  const queue = [...order];
  await Promise.all(
    Array.from({ length: 4 }, async (_, lane) => {
      for (let next = queue.shift(); next; next = queue.shift()) builds.push({ i: next.i, pkg: next.pkg, id: (await uploadThrough((lane % 2) as 0 | 1, next.file)).id });
    }),
  );
  // The bound: four times the analyses back to back (two instances should take about half: the rest is room for the
  // uploads and for other test files sharing the cores), plus two minutes of fixed costs. The stall this guards
  // against (every job waiting for every earlier build of the app) missed by far more: 14 of 333 scans in 5 minutes.
  const boundMs = 4 * analysisMs + 120_000;
  let scanned = 0;
  while (Date.now() - started < boundMs) {
    scanned = await h.deps.db.collection('scans').countDocuments({ appId, engine: 'static' });
    if (scanned === 100) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const elapsedMs = Date.now() - started;
  await Promise.all(runners.map((r) => r.stop()));
  clearInterval(tick);
  console.log(`scan flow: 100 scans in ${(elapsedMs / 1000).toFixed(1)} s on two instances; the same analyses back to back in one worker: ${(analysisMs / 1000).toFixed(1)} s; bound ${(boundMs / 1000).toFixed(1)} s`);
  expect(scanned).toBe(100);

  // Each baseline is the scan of the latest earlier-registered build of the same package (registration order).
  const registered = await Promise.all(builds.map(async (b) => ({ ...b, createdAt: (await getBuild(h, key, b.id)).createdAt as string })));
  registered.sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1));
  const previous = new Map<string, string>();
  const deferrals: number[] = [];
  for (const b of registered) {
    const scan = await staticScanOfBuild(b.id);
    const before = previous.get(b.pkg);
    expect({ build: b.id, baseline: scan.baseline?.buildId ?? null }).toEqual({ build: b.id, baseline: before ?? null });
    previous.set(b.pkg, b.id);
    const job = await jobOf(b.id);
    expect(job.state).toBe('done');
    deferrals.push(job.deferrals ?? 0);
  }
  console.log(`scan flow: deferrals per job: max ${Math.max(...deferrals)}, total ${deferrals.reduce((a, b) => a + b, 0)}`);
  expect(Math.max(...deferrals)).toBeLessThanOrEqual(3);
});

it('delays only the later builds of a package whose earlier build is slow, and wakes them when it ends', async () => {
  // The earlier build's analysis takes seconds (slowPackage), but its package is known as soon as its manifest is read.
  const [slowFile, otherFile, laterFile] = await Promise.all([
    slowPackage('com.example.stuck').then((bytes) => writeRawFile('stuck.apk', bytes)),
    apk('com.example.free', ['Alpha']),
    apk('com.example.stuck', ['Alpha', 'Beta']),
  ]);
  h.clock.advance(1_000);
  const slow = await uploadThrough(0, slowFile);
  h.clock.advance(1_000);
  const other = await uploadThrough(1, otherFile);
  h.clock.advance(1_000);
  const later = await uploadThrough(0, laterFile);
  const first = createJobRunner(h.deps);
  const running = first.runDue();
  while (!(await jobOf(slow.id)).package) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(await jobOf(slow.id)).toMatchObject({ state: 'running', package: 'com.example.stuck' });

  // Meanwhile, on the other instance: the other package's build, registered after the slow one, is scanned at once;
  // the slow package's later build waits for it.
  const runner = createJobRunner(second.deps);
  while (await runner.runDue());
  expect(await jobOf(other.id)).toMatchObject({ state: 'done' });
  expect((await jobOf(other.id)).deferrals ?? 0).toBe(0);
  expect(await staticScanOfBuild(other.id)).toMatchObject({ baseline: null });
  const slowJob = await jobOf(slow.id);
  expect(slowJob.state).toBe('running');
  expect(await jobOf(later.id)).toMatchObject({ state: 'queued', deferrals: 1, waitsFor: slowJob._id, package: 'com.example.stuck' });

  // The slow job ends, which makes the waiting one due at once (the service clock has not moved).
  expect(await running).toBe(true);
  expect(await jobOf(slow.id)).toMatchObject({ state: 'done' });
  expect((await jobOf(later.id)).runAfter.getTime()).toBeLessThanOrEqual(h.clock.now().getTime());
  expect(await runner.runDue()).toBe(true);
  expect(await jobOf(later.id)).toMatchObject({ state: 'done', deferrals: 1 });
  expect((await staticScanOfBuild(later.id)).baseline).toMatchObject({ buildId: slow.id });
});
