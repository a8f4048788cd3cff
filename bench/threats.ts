// Security-events bench: ingests 200,000 device events through POST /v1/events (batches of 100, a few requests in
// flight), then times GET /v1/apps/{id}/threats for page 1 and for the page 2,000 pages deep (default limit 25),
// given its cursor. In the same run, a floor inserts the same events, one document each, with the driver's
// insertMany (same batches, same concurrency, same indexes) into an empty collection of the same server.
// Targets: the deep page within 1.5x the first page's latency; ingestion at least 0.5x the floor's rate.
// Also: ingestion with an eventId on every event against without (at least 0.8 of it), measured in alternating rounds
// of 20,000 events each (so a change of the machine's load hits both sides alike), twice: through POST /v1/events as
// an SDK sends them (the target: what a device and its operator see), and in-process, the merge path alone, which
// shows the claims' own cost (one more insert of a document per event, which exactly-once needs); and page 1
// read while a retention sweep deletes 100,000 expired threats (of another app, added for it) against page 1 read with
// no sweep running, at the same collection sizes (at most 2x: per pass, the median read during it against the quiet
// reads just before and after it; the median over the passes; p99 printed too).
//
// The event mix is what SDKs send: most events are new observations; 20% repeat an event of the same batch within
// seconds (a device reporting one detection several times in a flush), 2% repeat one of an earlier batch within
// 5 minutes (merges that need a lookup). BENCH_EVENTS changes the count, BENCH_EXPIRED the 100,000 expired threats;
// MONGODB_URI uses that server instead of a FerretDB of our own; BENCH_ONLY=eventIds runs the eventId rounds alone
// (BENCH_ID_ROUNDS of them, default 3); eventIds are UUIDv7s (time-ordered), random UUIDs with
// BENCH_EVENT_IDS=random. The deep page's cursor is minted for the 50,000th threat exactly as the service mints it;
// BENCH_WALK=1 follows 1,999 cursors to it instead (slow where the server scans, as FerretDB on SQLite does).
// Run: npm run bench:threats
import os from 'node:os';
import { MongoClient, type Collection } from 'mongodb';
import { loadConfig } from '../src/core/config';
import { createDeps, closeDeps } from '../src/bootstrap';
import { createLogger } from '../src/core/logger';
import { ManualClock } from '../src/core/clock';
import { createApp } from '../src/services/apps-service';
import { createApiKey } from '../src/services/keys-service';
import { ThreatsRepo, type ThreatDoc } from '../src/data/threats-repo';
import { ThreatMergesRepo } from '../src/data/threat-merges-repo';
import { ensureIndexes } from '../src/data/db';
import { createContext } from '../src/services/context';
import { ingestEvents, type SecurityEventInput } from '../src/services/events-service';
import type { Deps } from '../src/core/deps';
import { hashDeviceId, mergeKey } from '../src/threats/merge-key';
import { windowDoc, type PreparedEvent } from '../src/threats/window-doc';
import { sweepThreats } from '../src/jobs/threat-retention';
import { benchMongo, fmt, startInProcessService } from './support';
import { operatorContext } from '../src/services/operator-context';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 200_000);
const BATCH = 100;
const IN_FLIGHT = 4;
const DEEP_PAGES = 2_000;
const PAGE_SIZE = 25; // the default limit
const SAMPLES = 7; // each page costs seconds where the server scans (FerretDB on SQLite)
const SPACING_MS = 216; // 4.6 events a second: 200,000 events span half a day
const ID_ROUND_EVENTS = 20_000;
const ID_ROUNDS = Number(process.env.BENCH_ID_ROUNDS ?? 3);
const EXPIRED = Number(process.env.BENCH_EXPIRED ?? 100_000); // threats the retention sweep deletes while page 1 is read
const DETECTIONS = ['root_jailbreak', 'emulator', 'debugger', 'hooking', 'tamper', 'overlay', 'accessibility_abuse', 'screen_capture', 'remote_access'] as const;
const VERDICTS = ['clean', 'suspicious', 'compromised'] as const;
const ACTIONS = ['monitor', 'warn', 'block', 'end_session'] as const;

interface BenchEvent {
  detection: string;
  verdict: string;
  confidence: number;
  action: string;
  signals: string[];
  platform: 'android' | 'ios';
  appVersion: string;
  occurredAt: string;
  deviceId: string;
}

/**
 * The eventId of each event of `batches`, as an SDK makes them: a UUIDv7 from the time the event occurred (the
 * contract's suggestion: ids that sort by time), or with BENCH_EVENT_IDS=random a random UUID (version 4), to show
 * what a client whose ids do not sort by time costs. Deterministic, so rounds ingest the same ids.
 */
function eventIdsFor(batches: BenchEvent[][]): string[][] {
  const rand = rng(7);
  const hex = (digits: number) => Array.from({ length: digits }, () => Math.floor(rand() * 16).toString(16)).join('');
  const variant = () => (8 + Math.floor(rand() * 4)).toString(16);
  const random = process.env.BENCH_EVENT_IDS === 'random';
  return batches.map((batch) =>
    batch.map((e) => {
      if (random) return `${hex(8)}-${hex(4)}-4${hex(3)}-${variant()}${hex(3)}-${hex(12)}`;
      const ms = Date.parse(e.occurredAt).toString(16).padStart(12, '0');
      return `${ms.slice(0, 8)}-${ms.slice(8)}-7${hex(3)}-${variant()}${hex(3)}-${hex(12)}`;
    }),
  );
}

/** Deterministic pseudo-random numbers, so two runs ingest the same events. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

function generate(count: number, start: number): BenchEvent[][] {
  const rand = rng(42);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)];
  const spacing = SPACING_MS; // a batch of 100 holds ~20 s of events
  const batches: BenchEvent[][] = [];
  const recent: BenchEvent[] = [];
  for (let i = 0; i < count; i += BATCH) {
    const batch: BenchEvent[] = [];
    for (let j = 0; j < BATCH && i + j < count; j++) {
      const at = new Date(start + (i + j) * spacing).toISOString();
      const roll = rand();
      const source = roll < 0.2 && batch.length > 0 ? pick(batch) : roll < 0.22 && recent.length > 0 ? pick(recent) : null;
      const e: BenchEvent = source
        ? { ...source, occurredAt: at, confidence: Math.round(rand() * 100) / 100 }
        : {
            detection: pick(DETECTIONS),
            verdict: pick(VERDICTS),
            confidence: Math.round(rand() * 100) / 100,
            action: pick(ACTIONS),
            signals: [`signal_${Math.floor(rand() * 40)}`, `signal_${Math.floor(rand() * 40)}`],
            platform: rand() < 0.6 ? 'android' : 'ios',
            appVersion: pick(['3.1.0', '3.1.1', '3.2.0']),
            occurredAt: at,
            deviceId: `device-${String(Math.floor(rand() * 50_000)).padStart(8, '0')}`,
          };
      batch.push(e);
    }
    recent.splice(0, recent.length, ...batch.slice(-50)); // the previous batch: within seconds, inside 5 minutes
    batches.push(batch);
  }
  return batches;
}

async function inFlight<T>(items: T[], limit: number, run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: limit }, async () => {
    while (next < items.length) await run(items[next++]);
  }));
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
/** Nearest-rank percentile. */
const percentile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(q * xs.length) - 1)];

async function timed(run: () => Promise<void>): Promise<number> {
  const started = process.hrtime.bigint();
  await run();
  return Number(process.hrtime.bigint() - started) / 1e6;
}

/** The floor: the same events as one threat document each, inserted with insertMany, nothing else. */
async function floor(client: MongoClient, batches: BenchEvent[][], appId: string, deviceKey: Buffer, now: Date): Promise<number> {
  const db = client.db(`bench_threats_floor_${Date.now()}`);
  const col = db.collection<ThreatDoc>(ThreatsRepo.collectionName);
  await ensureIndexes(col, [
    { key: { appId: 1, occurredAt: -1, _id: -1 }, name: 'app_time' },
    { key: { appId: 1, detection: 1, occurredAt: -1, _id: -1 }, name: 'app_detection_time' },
  ]);
  let serial = 0;
  const docs = batches.map((batch) =>
    batch.map((e) => {
      const deviceHash = hashDeviceId(deviceKey, appId, e.deviceId);
      const identity = { appId, deviceHash, detection: e.detection, verdict: e.verdict, action: e.action, signals: e.signals, platform: e.platform, appVersion: e.appVersion, buildId: null };
      const prepared = { ...identity, key: `${mergeKey(identity)}${serial++}`, at: new Date(e.occurredAt), confidence: e.confidence } as PreparedEvent;
      return windowDoc(prepared, { first: prepared.at, last: prepared.at, confidence: e.confidence, count: 1 }, 0, now);
    }),
  );
  const ms = await timed(() => inFlight(docs, IN_FLIGHT, async (batch) => void (await col.insertMany(batch, { ordered: false }))));
  await db.dropDatabase();
  return ms;
}

/** `EXPIRED` threats of `appId` first seen a day before the retention period's start, inserted directly. */
async function addExpired(threats: Collection<ThreatDoc>, appId: string, now: Date, retentionDays: number): Promise<void> {
  const oldest = now.getTime() - (retentionDays + 1) * 86_400_000 - EXPIRED * 1000;
  for (let i = 0; i < EXPIRED; i += 1000) {
    const docs = Array.from({ length: Math.min(1000, EXPIRED - i) }, (_, j) => {
      const at = new Date(oldest + (i + j) * 1000);
      const key = `expired-${i + j}`;
      const prepared = { appId, deviceHash: key, detection: 'hooking', verdict: 'suspicious', action: 'warn', signals: ['frida_server'], platform: 'android', appVersion: '3.0.0', buildId: null, key, at, confidence: 0.5 } as PreparedEvent;
      return windowDoc(prepared, { first: at, last: at, confidence: 0.5, count: 1 }, 0, at);
    });
    await threats.insertMany(docs, { ordered: false });
  }
}

/**
 * The same events through the service function in-process (no HTTP, JSON, contract validation, GraphQL or
 * authentication), into a database of their own: what the merge path itself costs next to the floor.
 */
async function serviceOnly(client: MongoClient, uri: string, batches: BenchEvent[][], clock: ManualClock, withEventIds = false): Promise<number> {
  const deps: Deps = await createDeps(loadConfig({ MONGODB_URI: uri, MONGODB_DATABASE: `bench_threats_service_${Date.now()}`, LOG_LEVEL: 'silent' }), {
    mongo: client,
    clock,
    logger: createLogger('silent'),
  });
  try {
    const appDoc = await createApp(operatorContext(deps), { name: 'bench-service', plan: 'enterprise' });
    const ctx = createContext(deps, { kind: 'api_key', appId: appDoc._id, org: appDoc.org, plan: 'enterprise', keyId: 'bench', mode: 'live', scopes: ['events:ingest'], expiresAt: null });
    const ids = eventIdsFor(batches);
    const inputs = batches.map((batch, b) =>
      batch.map((e, i): SecurityEventInput => ({ ...e, buildId: null, occurredAt: new Date(e.occurredAt), ...(withEventIds ? { eventId: ids[b][i] } : {}) })),
    );
    return await timed(() => inFlight(inputs, IN_FLIGHT, async (batch) => void (await ingestEvents(ctx, batch))));
  } finally {
    await deps.db.dropDatabase().catch(() => undefined);
    await closeDeps(deps, { closeMongo: false });
  }
}

/**
 * The same events through POST /v1/events (a few requests in flight) to a service of their own on a database of
 * their own, as serviceOnly does (so the rounds neither slow each other nor grow the collections the page reads
 * below measure): with `withEventIds`, each event carries an id of its own. Checks every event was accepted once.
 */
async function overHttp(client: MongoClient, uri: string, batches: BenchEvent[][], clock: ManualClock, withEventIds: boolean): Promise<number> {
  const service = await startInProcessService(client, uri, `bench_threats_http_${Date.now()}`, clock);
  const { deps, baseUrl } = service;
  try {
    const appDoc = await createApp(operatorContext(deps), { name: 'bench-http', plan: 'enterprise' });
    const device = (await createApiKey(operatorContext(deps), { appId: appDoc._id, scopes: ['events:ingest'], mode: 'live' })).key;
    const ids = eventIdsFor(batches);
    const bodies = batches.map((batch, b) => JSON.stringify({ events: batch.map((e, i) => (withEventIds ? { ...e, eventId: ids[b][i] } : e)) }));
    let accepted = 0;
    const ms = await timed(() =>
      inFlight(bodies, IN_FLIGHT, async (body) => {
        const res = await fetch(`${baseUrl}/v1/events`, { method: 'POST', headers: { authorization: `Bearer ${device}`, 'content-type': 'application/json' }, body });
        if (res.status !== 202) throw new Error(`ingest answered ${res.status}: ${await res.text()}`);
        accepted += ((await res.json()) as { accepted: number }).accepted;
      }),
    );
    const events = batches.reduce((n, b) => n + b.length, 0);
    if (accepted !== events) throw new Error(`accepted ${accepted} of ${events} events`);
    return ms;
  } finally {
    await service.close({ dropDatabase: true });
  }
}

async function main(): Promise<void> {
  const mongo = await benchMongo();
  const client = new MongoClient(mongo.uri);
  await client.connect();
  const dbName = `bench_threats_${Date.now()}`;
  const start = Date.now() - 24 * 3600 * 1000;
  const clock = new ManualClock(start + Math.max(EVENTS, ID_ROUND_EVENTS) * SPACING_MS + 60_000); // just after the last event
  const service = await startInProcessService(client, mongo.uri, dbName, clock);
  const { deps, baseUrl } = service;
  try {
    const appDoc = await createApp(operatorContext(deps), { name: 'bench', plan: 'enterprise' });
    const device = (await createApiKey(operatorContext(deps), { appId: appDoc._id, scopes: ['events:ingest'], mode: 'live' })).key;
    const reader = (await createApiKey(operatorContext(deps), { appId: appDoc._id, scopes: ['threats:read'], mode: 'live' })).key;
    const batches = generate(EVENTS, start);
    console.log(`database: ${process.env.MONGODB_URI ? 'MONGODB_URI' : 'FerretDB (own, SQLite)'}; ${EVENTS} events in ${batches.length} batches, ${IN_FLIGHT} in flight; load average ${os.loadavg().map((l) => fmt(l, 1)).join(' ')}`);

    const idsOnly = process.env.BENCH_ONLY === 'eventIds';
    const floorMs = idsOnly ? 0 : await floor(client, batches, appDoc._id, deps.deviceIdKey, clock.now());
    const serviceMs = idsOnly ? 0 : await serviceOnly(client, mongo.uri, batches, clock);
    // With eventIds against without, in alternating rounds (without/with, with/without, ...), over HTTP and in-process.
    const roundBatches = generate(ID_ROUND_EVENTS, start);
    const roundEvents = ID_ROUND_EVENTS;
    const idRatios: Record<'http' | 'inProcess', number[]> = { http: [], inProcess: [] };
    for (let round = 0; round < ID_ROUNDS; round++) {
      const order = round % 2 === 0 ? [false, true] : [true, false];
      for (const way of ['http', 'inProcess'] as const) {
        const ms = new Map<boolean, number>();
        for (const withIds of order) ms.set(withIds, way === 'http' ? await overHttp(client, mongo.uri, roundBatches, clock, withIds) : await serviceOnly(client, mongo.uri, roundBatches, clock, withIds));
        idRatios[way].push(ms.get(false)! / ms.get(true)!);
        const rate = (withIds: boolean) => fmt(roundEvents / (ms.get(withIds)! / 1000), 0);
        console.log(`eventIds round ${round + 1} ${way === 'http' ? 'over HTTP ' : 'in-process'}: without ${rate(false)} events/s, with ${rate(true)} events/s: ${fmt(idRatios[way][round], 2)}`);
      }
    }
    if (idsOnly) {
      console.log(`with eventIds / without: over HTTP ${fmt(median(idRatios.http), 2)}, in-process ${fmt(median(idRatios.inProcess), 2)} (medians of ${ID_ROUNDS} rounds)`);
      return;
    }
    const ingestMs = await timed(() =>
      inFlight(batches, IN_FLIGHT, async (batch) => {
        const res = await fetch(`${baseUrl}/v1/events`, {
          method: 'POST',
          headers: { authorization: `Bearer ${device}`, 'content-type': 'application/json' },
          body: JSON.stringify({ events: batch }),
        });
        if (res.status !== 202) throw new Error(`ingest answered ${res.status}: ${await res.text()}`);
      }),
    );
    const threats = deps.db.collection<ThreatDoc>(ThreatsRepo.collectionName);
    const stored = await threats.countDocuments({ appId: appDoc._id });
    const sum = async (name: string) => (await deps.db.collection<{ count: number }>(name).find({ appId: appDoc._id }, { projection: { count: 1 } }).toArray()).reduce((n, d) => n + d.count, 0);
    const counted = (await sum(ThreatsRepo.collectionName)) + (await sum(ThreatMergesRepo.collectionName));
    if (counted !== EVENTS) throw new Error(`counts add up to ${counted}, not ${EVENTS}`);

    const page = async (cursor?: string) => {
      const res = await fetch(`${baseUrl}/v1/apps/${appDoc._id}/threats${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`, { headers: { authorization: `Bearer ${reader}` } });
      if (res.status !== 200) throw new Error(`list answered ${res.status}: ${await res.text()}`);
      return (await res.json()) as { data: Array<{ id: string }>; nextCursor: string | null };
    };

    // The cursor of page 2,001: after the 50,000th threat, newest first (fewer pages when BENCH_EVENTS is small).
    const deepPages = Math.min(DEEP_PAGES, Math.floor(stored / PAGE_SIZE) - 1);
    let deepCursor: string;
    if (process.env.BENCH_WALK === '1') {
      let cursor: string | null = null;
      for (let i = 0; i < deepPages; i++) cursor = (await page(cursor ?? undefined)).nextCursor;
      deepCursor = cursor!;
    } else {
      const [last] = await threats.find({ appId: appDoc._id }).sort({ occurredAt: -1, _id: -1 }).skip(deepPages * PAGE_SIZE - 1).limit(1).toArray();
      deepCursor = deps.cursors.encode('threats', { appId: appDoc._id }, [last.occurredAt.getTime(), last._id]);
    }
    const expectedDeep = (await threats.find({ appId: appDoc._id }).sort({ occurredAt: -1, _id: -1 }).skip(deepPages * PAGE_SIZE).limit(1).toArray())[0];
    const deepFirst = (await page(deepCursor)).data[0];
    if (deepFirst.id !== expectedDeep._id) throw new Error(`the deep page does not start at threat ${deepPages * PAGE_SIZE + 1}`);

    const firstTimes: number[] = [];
    const deepTimes: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      firstTimes.push(await timed(async () => void (await page())));
      deepTimes.push(await timed(async () => void (await page(deepCursor))));
    }

    const ingestRate = EVENTS / (ingestMs / 1000);
    const floorRate = EVENTS / (floorMs / 1000);
    const ratio = ingestRate / floorRate;
    const deepRatio = median(deepTimes) / median(firstTimes);
    console.log(`ingest  ${fmt(ingestMs / 1000, 2)} s  ${fmt(ingestRate, 0)} events/s  -> ${stored} threats (${EVENTS - stored} events merged)`);
    console.log(`floor   ${fmt(floorMs / 1000, 2)} s  ${fmt(floorRate, 0)} docs/s (insertMany of one document per event)`);
    console.log(`service ${fmt(serviceMs / 1000, 2)} s  ${fmt(EVENTS / (serviceMs / 1000), 0)} events/s (ingestEvents in-process, no HTTP): ${fmt(floorMs / serviceMs, 2)} of the floor`);
    console.log(`ingest/floor ${fmt(ratio, 2)} (over HTTP)  target >= 0.5: ${ratio >= 0.5 ? 'PASS' : 'FAIL'}`);
    const idsRatio = median(idRatios.http);
    console.log(`with eventIds / without (over HTTP, median of ${ID_ROUNDS} rounds of ${roundEvents} events): ${fmt(idsRatio, 2)}  target >= 0.8: ${idsRatio >= 0.8 ? 'PASS' : 'FAIL'}`);
    console.log(`with eventIds / without (in-process, the merge path alone, median of ${ID_ROUNDS} rounds): ${fmt(median(idRatios.inProcess), 2)}`);
    console.log(`page 1       median ${fmt(median(firstTimes))} ms  (min ${fmt(Math.min(...firstTimes))}, max ${fmt(Math.max(...firstTimes))})`);
    console.log(`page ${deepPages + 1}  median ${fmt(median(deepTimes))} ms  (min ${fmt(Math.min(...deepTimes))}, max ${fmt(Math.max(...deepTimes))})  cursor ${process.env.BENCH_WALK === '1' ? 'walked' : 'minted'}`);
    console.log(`deep/first ${fmt(deepRatio, 2)}  target <= 1.5: ${deepRatio <= 1.5 ? 'PASS' : 'FAIL'}`);

    // Page 1 while a retention sweep deletes 100,000 expired threats of another app, against page 1 with no sweep
    // running at the same sizes: the sweep runs pass after pass (each deletes up to 10,000); page 1 is read once before
    // each pass and after the last with nothing else running, and again and again during each pass.
    const expiredApp = await createApp(operatorContext(deps), { name: 'bench-expired', plan: 'enterprise' });
    await addExpired(threats, expiredApp._id, clock.now(), deps.config.threatRetentionDays);
    // Page 1 is read with nothing else running before each sweep pass and after the last (`quiet`), and again and
    // again during each pass. Per pass, the median read during it is set against the mean of the quiet reads just
    // before and after it, which bracket the collection's size meanwhile (pooled medians would weigh the late passes
    // more: reads of the smaller collection are quicker, so more of them fall there).
    const quiet: number[] = [];
    const during: number[][] = [];
    let swept = 0;
    const sweepStarted = Date.now();
    for (;;) {
      quiet.push(await timed(async () => void (await page())));
      const reads: number[] = [];
      let running = true;
      const pass = sweepThreats(deps.repos, clock, deps.config.threatRetentionDays).finally(() => (running = false));
      pass.catch(() => undefined); // awaited below; a failed read must not leave it unhandled while the client closes
      try {
        while (running) reads.push(await timed(async () => void (await page())));
      } catch (error) {
        await pass.catch(() => undefined);
        throw error;
      }
      const deleted = (await pass).threatsDeleted;
      swept += deleted;
      if (deleted === 0) break;
      during.push(reads);
    }
    const sweepMs = Date.now() - sweepStarted;
    if (swept !== EXPIRED || (await threats.countDocuments({ appId: appDoc._id })) !== stored) throw new Error(`the sweep deleted ${swept} threats, not the ${EXPIRED} expired ones alone`);
    const passRatios = during.map((reads, i) => median(reads) / ((quiet[i] + quiet[i + 1]) / 2));
    const sweepRatio = median(passRatios);
    const allDuring = during.flat();
    const spread = (xs: number[]) => `p50 ${fmt(median(xs))} ms, p99 ${fmt(percentile(xs, 0.99))} ms over ${xs.length} reads`;
    console.log(`sweep  deleted ${swept} expired threats (collection ${stored + EXPIRED} -> ${stored}) in ${during.length} passes, ${fmt(sweepMs / 1000, 1)} s, page reads included`);
    console.log(`page 1 during the sweep: ${spread(allDuring)}; with no sweep running (before each pass and after the last): ${spread(quiet)}`);
    console.log(`per pass, during / without: ${passRatios.map((r) => fmt(r, 2)).join(' ')} (max ${fmt(Math.max(...passRatios), 2)})`);
    console.log(`during/without (median of the passes) ${fmt(sweepRatio, 2)}  target <= 2: ${sweepRatio <= 2 ? 'PASS' : 'FAIL'}`);
    console.log(`load average at the end: ${os.loadavg().map((l) => fmt(l, 1)).join(' ')}`);
    if (ratio < 0.5 || deepRatio > 1.5 || idsRatio < 0.8 || sweepRatio > 2) process.exitCode = 1;
  } finally {
    await service.close({ dropDatabase: true });
    await client.close();
    await mongo.stop();
  }
}

void main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
