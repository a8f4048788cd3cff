// Dashboards bench: times each aggregate of src/services/dashboards-service.ts over a 92-day range of one app holding
// BENCH_THREATS threats (default 20,000; a tenth of them with a merge record), 2,000 builds (four in five with a static
// scan), 10,000 refusal entries, and BENCH_APPS other apps (default 200) with two builds each (the latest-grade
// distribution reads every app's latest-build summary, as registration and the scan job keep it). Documents are inserted as the repositories store them. Prints the
// median of 3 runs per aggregate, the rows each read, and the rows read per second; a floor drains the threat reads
// without folding them, so the fold's own cost is the difference. MONGODB_URI uses that server instead of a FerretDB
// of our own (built by tools/ferretdb: its reads search the indexes, but it decodes each document returned whole, so
// the figures there are an upper bound of MongoDB's); BENCH_FERRETDB=reference runs it without the pushdown patches.
// Run: npx tsx bench/dashboards.ts
import { MongoClient } from 'mongodb';
import { loadConfig } from '../src/core/config';
import { createDeps, closeDeps } from '../src/bootstrap';
import { createLogger } from '../src/core/logger';
import { ManualClock } from '../src/core/clock';
import { createContext } from '../src/services/context';
import type { Deps } from '../src/core/deps';
import { DETECTIONS, type ThreatDoc } from '../src/data/threats-repo';
import type { ThreatMergeDoc } from '../src/data/threat-merges-repo';
import type { BuildDoc } from '../src/data/builds-repo';
import type { ScanDoc } from '../src/data/scans-repo';
import type { AuditDoc } from '../src/data/audit-repo';
import type { AppDoc } from '../src/data/apps-repo';
import { buildTrend, latestGradeDistribution, refusedExchanges, threatBreakdown, threatTrend } from '../src/services/dashboards-service';
import { benchMongo, fmt } from './support';

const THREATS = Number(process.env.BENCH_THREATS ?? 20_000);
const BUILDS = 2_000;
const REFUSALS = 10_000;
const OTHER_APPS = Number(process.env.BENCH_APPS ?? 200);
const RUNS = 3;
const DAY = 86_400_000;
const END = new Date('2025-06-01T00:00:00.000Z');
const RANGE = { from: new Date(END.getTime() - 92 * DAY), to: END };
const GRADES = ['A+', 'A', 'B', 'C', 'D', 'F'];
const REASONS = ['not_trusted', 'expired', 'malformed', 'bad_signature', 'replayed'];

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}
const rand = rng(7);
const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)];
const inRange = () => new Date(RANGE.from.getTime() + Math.floor(rand() * (RANGE.to.getTime() - RANGE.from.getTime())));
const hex = (i: number, width = 24) => i.toString(16).padStart(width, '0');

async function insertChunked<T>(deps: Deps, collection: string, docs: T[]): Promise<void> {
  for (let i = 0; i < docs.length; i += 1_000) await deps.db.collection(collection).insertMany(docs.slice(i, i + 1_000) as never[]);
}

function build(appId: string, i: number, createdAt: Date): BuildDoc {
  return { _id: `bld_${appId.slice(4)}${hex(i, 8)}`, appId, platform: 'android', version: `1.0.${i}`, commit: null, status: 'succeeded', engine: 'preview', createdAt, artifact: null, provenance: null };
}

function scan(b: BuildDoc, engine: 'preview' | 'static', grade: string): ScanDoc {
  return {
    _id: `scn_${engine[0]}${b._id.slice(4)}`,
    appId: b.appId,
    buildId: b._id,
    engine,
    grade,
    score: 80,
    target: { platform: 'android', name: 'com.example.bench', version: b.version },
    findings: [],
    createdAt: new Date(b.createdAt.getTime() + 60_000),
  };
}

async function seed(deps: Deps, appId: string): Promise<void> {
  const apps: AppDoc[] = [{ _id: appId, name: 'bench', plan: 'enterprise', org: 'bench', createdAt: RANGE.from }];
  for (let i = 0; i < OTHER_APPS; i++) apps.push({ _id: `app_other${hex(i, 8)}`, name: 'other', plan: 'indie', org: 'bench', createdAt: RANGE.from });

  const threats: ThreatDoc[] = [];
  const merges: ThreatMergeDoc[] = [];
  for (let i = 0; i < THREATS; i++) {
    const occurredAt = inRange();
    const t: ThreatDoc = {
      _id: `thr_${hex(i, 32)}`,
      appId,
      mergeKey: hex(i, 64),
      generation: 0,
      deviceHash: hex(Math.floor(rand() * THREATS * 0.3), 64),
      detection: pick(DETECTIONS),
      verdict: 'compromised',
      confidence: 0.9,
      action: 'block',
      signals: ['frida_server'],
      platform: rand() < 0.6 ? 'android' : 'ios',
      appVersion: pick(['2.4.0', '2.4.1', '2.5.0', '3.0.0']),
      buildId: `bld_bench${hex(Math.floor(rand() * 50), 4)}`,
      occurredAt,
      lastOccurredAt: occurredAt,
      windowEnd: new Date(occurredAt.getTime() + 300_000),
      count: 1 + Math.floor(rand() * 3),
      receivedAt: occurredAt,
    };
    threats.push(t);
    if (i % 10 === 0) {
      merges.push({ _id: `mrg_${hex(i)}`, appId, threatId: t._id, count: 2, last: occurredAt, confidence: 0.9, threatOccurredAt: occurredAt, detection: t.detection, deviceHash: t.deviceHash, createdAt: occurredAt });
    }
  }
  await insertChunked(deps, 'threats', threats);
  await insertChunked(deps, 'threat_merges', merges);

  const builds: BuildDoc[] = [];
  const scans: ScanDoc[] = [];
  for (let i = 0; i < BUILDS; i++) builds.push(build(appId, i, inRange()));
  for (const a of apps.slice(1)) for (let i = 0; i < 2; i++) builds.push(build(a._id, i, inRange()));
  for (const b of builds) {
    scans.push(scan(b, 'preview', 'B'));
    if (rand() < 0.8) scans.push(scan(b, 'static', pick(GRADES)));
  }
  await insertChunked(deps, 'builds', builds);
  await insertChunked(deps, 'scans', scans);
  // Each app's summary of its newest build (by time, then id) and that build's static grade.
  const staticGrade = new Map(scans.filter((s) => s.engine === 'static').map((s) => [s.buildId, s.grade]));
  for (const a of apps) a.latestBuild = null;
  const byId = new Map(apps.map((a) => [a._id, a]));
  for (const b of builds) {
    const app = byId.get(b.appId)!;
    const prior = app.latestBuild;
    if (!prior || b.createdAt > prior.createdAt || (b.createdAt.getTime() === prior.createdAt.getTime() && b._id > prior.id)) {
      app.latestBuild = { id: b._id, createdAt: b.createdAt, platform: b.platform, grade: staticGrade.get(b._id) ?? null };
    }
  }
  await insertChunked(deps, 'apps', apps);

  const refusals: AuditDoc[] = Array.from({ length: REFUSALS }, (_, i) => ({
    _id: `aud_${hex(i)}`,
    appId,
    org: 'bench',
    action: 'oidc.denied',
    occurredAt: inRange(),
    subject: null,
    reason: pick(REASONS),
    ruleId: null,
    details: {},
    count: 1 + Math.floor(rand() * 5),
  }));
  await insertChunked(deps, 'audit_events', refusals);
}

async function time(label: string, rowsRead: number, run: () => Promise<unknown>): Promise<void> {
  const samples: number[] = [];
  let result: unknown;
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    result = await run();
    samples.push(performance.now() - started);
  }
  const median = samples.sort((a, b) => a - b)[Math.floor(RUNS / 2)];
  const rows = Array.isArray(result) ? result.length : 0;
  console.log(`${label.padEnd(44)} ${fmt(median, 0).padStart(7)} ms  ${String(rowsRead).padStart(7)} rows read  ${fmt(rowsRead / (median / 1000), 0).padStart(8)} rows/s  -> ${rows} result rows`);
}

async function main(): Promise<void> {
  const mongo = await benchMongo();
  const client = new MongoClient(mongo.uri);
  await client.connect();
  const deps = await createDeps(loadConfig({ MONGODB_URI: mongo.uri, MONGODB_DATABASE: `bench_dashboards_${Date.now()}`, LOG_LEVEL: 'silent' }), {
    mongo: client,
    clock: new ManualClock(END),
    logger: createLogger('silent'),
  });
  try {
    const appId = 'app_benchdashboards';
    const started = Date.now();
    await seed(deps, appId);
    console.log(`seeded ${THREATS} threats, ${BUILDS} builds + ${OTHER_APPS * 2} of ${OTHER_APPS} other apps, ${REFUSALS} refusals in ${fmt((Date.now() - started) / 1000)} s (${mongo.uri.includes('127.0.0.1') && !process.env.MONGODB_URI ? 'FerretDB' : 'MONGODB_URI'})`);
    const ctx = createContext(deps, { kind: 'staff', staffId: 'stf_bench', role: 'support' });
    const threatRows = THREATS + Math.ceil(THREATS / 10);
    // The floor: the same two reads, drained without folding (what the database and driver alone cost).
    await time('floor: the threat and merge-record reads alone', threatRows, async () => {
      let n = 0;
      for await (const _row of deps.repos.threats.statsRows(appId, RANGE.from, RANGE.to, threatRows)) n++;
      for await (const _row of deps.repos.threatMerges.statsRows(appId, RANGE.from, RANGE.to, threatRows)) n++;
      return new Array(n);
    });
    await time('threatTrend, 92 days', threatRows, () => threatTrend(ctx, { appId, range: RANGE }));
    await time('threatTrend, 92 days, narrowed to one version', threatRows, () => threatTrend(ctx, { appId, range: RANGE, appVersion: '2.4.1' }));
    await time('threatBreakdown by detection, version, build', threatRows, () => threatBreakdown(ctx, { appId, range: RANGE, by: ['detection', 'appVersion', 'buildId'], first: 100 }));
    await time('buildTrend, 92 days', BUILDS, () => buildTrend(ctx, { appId, range: RANGE }));
    await time('refusedExchanges of the app, 92 days', REFUSALS, () => refusedExchanges(ctx, { appId, range: RANGE }));
    await time('refusedExchanges of every app, 92 days', REFUSALS, () => refusedExchanges(ctx, { appId: null, range: RANGE }));
    await time(`latestGradeDistribution, ${OTHER_APPS + 1} apps`, OTHER_APPS + 1, () => latestGradeDistribution(ctx));
  } finally {
    await deps.db.dropDatabase().catch(() => undefined);
    await closeDeps(deps, { closeMongo: false });
    await client.close();
    await mongo.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
