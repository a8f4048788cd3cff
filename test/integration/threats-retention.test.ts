// Protects: the retention sweep deletes threats first seen more than THREAT_RETENTION_DAYS ago with their merge
// records and nothing newer; folds merge records older than the fold age into their threat exactly once, even when
// instances sweep at once, so counts, lastOccurredAt and daily statistics stay exact before, during and after; deletes
// expired event-id claims; and pages followed across a sweep neither repeat nor skip a surviving threat.
import { startHarness, type Harness } from '../support/harness';
import { sweepThreats, FOLD_AFTER_MS, FOLD_GC_AFTER_MS } from '../../src/jobs/threat-retention';
import { claimIdFor } from '../../src/threats/event-claims';
import { ThreatMergesRepo } from '../../src/data/threat-merges-repo';
import { event, gql, ingest, list, listAll, minutes, startSecondInstance } from './threats-support';

const DAY = 86_400_000;
let h: Harness;
let second: { baseUrl: string; close(): Promise<void> };

beforeAll(async () => {
  h = await startHarness({ now: new Date('2025-03-14T12:00:00.000Z') });
  second = await startSecondInstance(h);
});
afterAll(async () => {
  await second.close();
  await h.close();
});

async function freshApp() {
  const { appId } = await h.newApp('enterprise');
  return { appId, device: (await h.newKey(appId, ['events:ingest'])).key, reader: (await h.newKey(appId, ['threats:read'])).key };
}

const sweep = (foldMaxDeletes?: number) => sweepThreats(h.deps.repos, h.clock, h.config.threatRetentionDays, foldMaxDeletes);
const recordsOf = (appId: string) => h.deps.db.collection(ThreatMergesRepo.collectionName).countDocuments({ appId });
const ago = (ms: number) => new Date(h.clock.now().getTime() - ms);

it('deletes threats past the retention period with their merge records, and nothing newer', async () => {
  expect(h.config.threatRetentionDays).toBe(90);
  const a = await freshApp();
  const old = event(ago(minutes(60)), { deviceId: 'device-old-0001' });
  await ingest(h.baseUrl, a.device, [old]);
  await ingest(second.baseUrl, a.device, [old]); // a merge record of the old threat
  h.clock.advance(60 * DAY);
  const recent = event(ago(minutes(60)), { deviceId: 'device-new-0001' });
  await ingest(h.baseUrl, a.device, [recent]);
  await ingest(second.baseUrl, a.device, [recent]);
  h.clock.advance(30 * DAY); // the old threat is 90 days and 1 hour old, the recent one 30 days
  expect((await listAll(h, a.reader, a.appId)).map((t) => t.count)).toEqual([2, 2]);

  const result = await sweep();
  expect(result.threatsDeleted).toBeGreaterThanOrEqual(1);
  const left = await listAll(h, a.reader, a.appId);
  expect(left.map((t) => [t.occurredAt, t.count])).toEqual([[recent.occurredAt, 2]]);
  expect(await recordsOf(a.appId)).toBeLessThanOrEqual(1); // the recent threat's record, unless already folded
});

it('folds old merge records into their threat once, also when two instances sweep at once', async () => {
  const a = await freshApp();
  const e = event(ago(minutes(2)));
  for (let i = 0; i < 4; i++) await ingest(i % 2 ? second.baseUrl : h.baseUrl, a.device, [e, e]); // 8 occurrences
  const before = await listAll(h, a.reader, a.appId);
  expect(before.map((t) => t.count)).toEqual([8]);
  expect(await recordsOf(a.appId)).toBe(3);

  h.clock.advance(FOLD_AFTER_MS + minutes(1));
  await ingest(h.baseUrl, a.device, [e]); // the same event again, now: a recent record, not folded
  await Promise.all([sweep(), sweep(), sweep()]);
  const threat = await h.deps.repos.threats.findById(before[0].id);
  expect(threat?.folded?.count).toBe(6); // the three old records, two occurrences each
  expect((await listAll(h, a.reader, a.appId)).map((t) => [t.count, t.lastOccurredAt])).toEqual([[9, before[0].lastOccurredAt]]);

  // Folded records are deleted once the fold is old enough; counts stay exact at every step.
  h.clock.advance(FOLD_GC_AFTER_MS + minutes(1));
  await Promise.all([sweep(), sweep()]);
  expect((await listAll(h, a.reader, a.appId)).map((t) => t.count)).toEqual([9]);
  h.clock.advance(FOLD_AFTER_MS); // the recent record is folded now, and deleted once that fold is old enough
  await sweep();
  expect(await recordsOf(a.appId)).toBe(1);
  expect((await listAll(h, a.reader, a.appId)).map((t) => t.count)).toEqual([9]);
  h.clock.advance(FOLD_GC_AFTER_MS);
  await sweep();
  expect(await recordsOf(a.appId)).toBe(0);
  expect((await listAll(h, a.reader, a.appId)).map((t) => t.count)).toEqual([9]);

  const token = await h.newStaff('support');
  const day = String(e.occurredAt).slice(0, 10);
  const stats = await gql(h, token, 'query($a: ID!, $f: DateTime!, $t: DateTime!) { threatStats(appId: $a, from: $f, to: $t) { day events threats } }', {
    a: a.appId,
    f: `${day}T00:00:00.000Z`,
    t: new Date(Date.parse(`${day}T00:00:00.000Z`) + DAY).toISOString(),
  });
  expect(stats.body.errors).toBeUndefined();
  expect(stats.body.data.threatStats).toEqual([{ day, events: 9, threats: 1 }]);
});

it('deletes folded records while sweeps run every minute, also more of one threat than one pass deletes', async () => {
  const a = await freshApp();
  const at = ago(minutes(2));
  const batch = (n: number) => Array.from({ length: 100 }, (_, i) => event(at, { eventId: `event-${n}-${i}` }));
  expect((await ingest(h.baseUrl, a.device, batch(0))).body.accepted).toBe(100); // opens the threat: no records
  const maxDeletes = 150; // FOLD_MAX_DELETES (2,000) scaled down: the same code, fewer records to write
  const batches = 2;
  for (let n = 1; n <= batches; n++) expect((await ingest(h.baseUrl, a.device, batch(n))).body.accepted).toBe(100);
  expect(await recordsOf(a.appId)).toBe(batches * 100); // one record per event with an id merged into it
  const total = (batches + 1) * 100;
  expect((await listAll(h, a.reader, a.appId)).map((t) => t.count)).toEqual([total]);

  h.clock.advance(FOLD_AFTER_MS + minutes(1));
  let sweeps = 0;
  while ((await recordsOf(a.appId)) > 0 && sweeps < 15) {
    await sweep(maxDeletes);
    sweeps += 1;
    expect((await listAll(h, a.reader, a.appId)).map((t) => t.count)).toEqual([total]); // exact at every step
    h.clock.advance(60_000); // the service's cadence
  }
  expect(await recordsOf(a.appId)).toBe(0);
  // One fold, then deletes once it is FOLD_GC_AFTER_MS old, in two passes (200 records, 150 a pass).
  expect(sweeps).toBe(FOLD_GC_AFTER_MS / 60_000 + 2);
});

it('deletes expired event-id claims', async () => {
  const a = await freshApp();
  await ingest(h.baseUrl, a.device, [event(ago(minutes(1)), { eventId: 'claim-to-expire' })]);
  const id = claimIdFor(a.appId, 'claim-to-expire');
  expect(await h.deps.repos.threatEventIds.find(id)).not.toBeNull();
  h.clock.advance(DAY + minutes(1));
  await sweep();
  expect(await h.deps.repos.threatEventIds.find(id)).toBeNull();
});

it('keeps pages stable while a sweep deletes and folds: no surviving threat repeated or skipped', async () => {
  const a = await freshApp();
  const batch = (n: number, tag: string) =>
    Array.from({ length: n }, (_, i) => event(ago(minutes(60) - i * 1000), { deviceId: `device-${tag}-${String(i).padStart(4, '0')}` }));
  const expiring = batch(12, 'old');
  await ingest(h.baseUrl, a.device, expiring);
  h.clock.advance(60 * DAY);
  const surviving = batch(12, 'new');
  await ingest(h.baseUrl, a.device, surviving);
  await ingest(second.baseUrl, a.device, surviving); // merge records, to be folded
  h.clock.advance(30 * DAY);

  const first = await list(h, a.reader, a.appId, { limit: 5 });
  expect(first.status).toBe(200);
  await sweep(); // deletes the expiring threats and folds the survivors' records
  const seen = [...first.body.data];
  let cursor = first.body.nextCursor;
  while (cursor) {
    const page = await list(h, a.reader, a.appId, { limit: 5, cursor });
    expect(page.status).toBe(200);
    seen.push(...page.body.data);
    cursor = page.body.nextCursor;
  }
  const ids = seen.map((t) => t.id);
  expect(new Set(ids).size).toBe(ids.length);
  expect(seen.map((t) => t.occurredAt).sort()).toEqual(surviving.map((e) => e.occurredAt).sort());
  expect(seen.every((t) => t.count === 2)).toBe(true);
});
