// The embedded database's envelope: how listing an app's threats (GET /v1/apps/{id}/threats, default limit 25) and
// ingestion (POST /v1/events, batches of 100, 4 in flight) behave as the threats collection grows to 1,000, 10,000 and
// 100,000 threats, on the default database (FerretDB 1.24 on SQLite, built with the fixes and pushdown patches of
// tools/ferretdb/build.sh). One collection grows step by step; at each size it times page 1 and a deep page (the page
// after 90% of the threats, its cursor minted as the service mints it) and the rate at which that step was ingested.
// Every event is a new observation (its own threat), so the collection holds exactly the stated number.
// Another app sends as many threats again (BENCH_OTHERS=<k>: k times as many; 0: none), so the collection holds
// other tenants' threats too. BENCH_SIZES changes the sizes (comma-separated); BENCH_FERRETDB=reference runs FerretDB
// without the pushdown patches (the "before"); MONGODB_URI measures that server instead.
// Run: npm run bench:threats:envelope
import os from 'node:os';
import { MongoClient } from 'mongodb';
import { ManualClock } from '../src/core/clock';
import { createApp } from '../src/services/apps-service';
import { createApiKey } from '../src/services/keys-service';
import { ThreatsRepo, type ThreatDoc } from '../src/data/threats-repo';
import { benchMongo, fmt, startInProcessService } from './support';
import { operatorContext } from '../src/services/operator-context';

const SIZES = (process.env.BENCH_SIZES ?? '1000,10000,100000').split(',').map(Number);
/** Threats of another app per threat of the measured one (BENCH_OTHERS, default 1). */
const OTHERS = Number(process.env.BENCH_OTHERS ?? 1);
const BATCH = 100;
const IN_FLIGHT = 4;
const SPACING_MS = 400; // 100,000 events span about 11 hours
const DETECTIONS = ['root_jailbreak', 'emulator', 'debugger', 'hooking', 'tamper', 'overlay', 'accessibility_abuse', 'screen_capture', 'remote_access'];

/** Latency percentiles of a list of samples (nearest rank). */
function percentile(samples: number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

/** Events `from`..`to`-1, each of its own device: each opens a threat of its own. */
function events(from: number, to: number, start: number): object[][] {
  const batches: object[][] = [];
  for (let i = from; i < to; i += BATCH) {
    batches.push(
      Array.from({ length: Math.min(BATCH, to - i) }, (_, j) => ({
        detection: DETECTIONS[(i + j) % DETECTIONS.length],
        verdict: (i + j) % 3 === 0 ? 'compromised' : 'suspicious',
        confidence: 0.7,
        action: 'warn',
        signals: ['frida_server'],
        platform: (i + j) % 2 ? 'ios' : 'android',
        appVersion: '3.2.0',
        occurredAt: new Date(start + (i + j) * SPACING_MS).toISOString(),
        deviceId: `device-${String(i + j).padStart(8, '0')}`,
      })),
    );
  }
  return batches;
}

async function main(): Promise<void> {
  const mongo = await benchMongo();
  const client = new MongoClient(mongo.uri);
  await client.connect();
  const largest = Math.max(...SIZES);
  const start = Date.now() - 20 * 24 * 3600 * 1000;
  const clock = new ManualClock(start + largest * SPACING_MS + 60_000);
  const service = await startInProcessService(client, mongo.uri, `bench_envelope_${Date.now()}`, clock);
  const { deps, baseUrl } = service;
  try {
    const appDoc = await createApp(operatorContext(deps), { name: 'bench-envelope', plan: 'enterprise' });
    const device = (await createApiKey(operatorContext(deps), { appId: appDoc._id, scopes: ['events:ingest'], mode: 'live' })).key;
    // Another app's threats share the collection, as on any real deployment: the measured app's pages must not pay for them.
    const otherApp = await createApp(operatorContext(deps), { name: 'bench-envelope-other', plan: 'enterprise' });
    const otherDevice = (await createApiKey(operatorContext(deps), { appId: otherApp._id, scopes: ['events:ingest'], mode: 'live' })).key;
    const reader = (await createApiKey(operatorContext(deps), { appId: appDoc._id, scopes: ['threats:read'], mode: 'live' })).key;
    const threats = deps.db.collection<ThreatDoc>(ThreatsRepo.collectionName);
    const page = async (cursor?: string) => {
      const res = await fetch(`${baseUrl}/v1/apps/${appDoc._id}/threats${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`, { headers: { authorization: `Bearer ${reader}` } });
      if (res.status !== 200) throw new Error(`list answered ${res.status}: ${await res.text()}`);
      return (await res.json()) as { data: Array<{ id: string }> };
    };
    console.log(`database: ${process.env.MONGODB_URI ? 'MONGODB_URI' : `FerretDB 1.24 on SQLite (tools/ferretdb: the _id fix${process.env.BENCH_FERRETDB === 'reference' ? ', without the pushdown patches' : ' and the pushdown patches'})`}; load average ${os.loadavg().map((l) => fmt(l, 1)).join(' ')}`);
    console.log(`threats   ingest events/s   page 1 p50 / p99 ms      deep page p50 / p99 ms   (samples)   with ${OTHERS}x as many of another app in the collection`);

    let stored = 0;
    for (const size of SIZES) {
      // The measured app's batches, each followed by OTHERS batches of the other app: the same events, its threats.
      const batches = events(stored, size, start).flatMap((batch) => [{ key: device, batch }, ...Array.from({ length: OTHERS }, () => ({ key: otherDevice, batch }))]);
      let next = 0;
      const ingestMs = await timed(() =>
        Promise.all(
          Array.from({ length: IN_FLIGHT }, async () => {
            while (next < batches.length) {
              const { key, batch } = batches[next++];
              const res = await fetch(`${baseUrl}/v1/events`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ events: batch }) });
              if (res.status !== 202) throw new Error(`ingest answered ${res.status}: ${await res.text()}`);
            }
          }),
        ),
      );
      const rate = ((size - stored) * (1 + OTHERS)) / (ingestMs / 1000);
      stored = size;
      // Counted over the whole collection: counting one app's million threats would decode each of them.
      if ((await threats.estimatedDocumentCount()) !== size * (1 + OTHERS)) throw new Error(`expected ${size * (1 + OTHERS)} threats`);

      // The deep page starts after 90% of the threats, newest first. Event i opened the threat that occurred at
      // start + i * SPACING_MS, so the last item of the page before is event size - skip, found by that time (an index
      // search) instead of by skipping (which reads every threat skipped).
      const skip = Math.floor(size * 0.9);
      const [last] = await threats.find({ appId: appDoc._id, occurredAt: new Date(start + (size - skip) * SPACING_MS) }).limit(1).toArray();
      const deepCursor = deps.cursors.encode('threats', { appId: appDoc._id }, [last.occurredAt.getTime(), last._id]);
      const samples = size <= 10_000 ? 15 : 5;
      await page(); // warm up: the first read after a burst of writes pays for checkpointing
      const first: number[] = [];
      const deep: number[] = [];
      for (let i = 0; i < samples; i++) {
        first.push(await timed(() => page()));
        deep.push(await timed(() => page(deepCursor)));
      }
      const show = (xs: number[]) => `${fmt(percentile(xs, 0.5)).padStart(8)} / ${fmt(percentile(xs, 0.99)).padEnd(8)}`;
      console.log(`${String(size).padStart(7)}   ${fmt(rate, 0).padStart(14)}   ${show(first)}       ${show(deep)}       (${samples})`);
    }
    console.log(`load average after: ${os.loadavg().map((l) => fmt(l, 1)).join(' ')}`);
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
