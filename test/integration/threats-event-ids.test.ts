// Protects: an event id counts once per app within 24 hours, across instances and under concurrent retries, and a
// crash between claiming an id and counting its event loses nothing (the retry counts it). The answer says how many
// events were accepted and how many were duplicates, and the accepted figures of all answers add up to the counts.
import { startHarness, type Harness } from '../support/harness';
import { claimEventIds } from '../../src/threats/event-claims';
import { after, event, ingest, listAll, minutes, startSecondInstance } from './threats-support';

let h: Harness;
let second: { baseUrl: string; close(): Promise<void> };
const t0 = new Date('2025-03-14T10:00:00.000Z');

beforeAll(async () => {
  h = await startHarness({ now: after(t0, minutes(60)) });
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

/** Ten events of ten devices, each with its own id. */
const batchOf = (n: number, prefix = 'evt') =>
  Array.from({ length: n }, (_, i) => event(after(t0, i * 1000), { deviceId: `device-${String(i).padStart(6, '0')}`, eventId: `${prefix}-${String(i).padStart(8, '0')}` }));

const total = (threats: any[]) => threats.reduce((sum, t) => sum + t.count, 0);

it('counts a batch sent 20 times at once through two instances once, and the answers add up', async () => {
  const a = await freshApp();
  const batch = batchOf(10);
  const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => ingest(i % 2 ? second.baseUrl : h.baseUrl, a.device, batch)));
  for (const answer of answers) expect(answer.status).toBe(202);
  const threats = await listAll(h, a.reader, a.appId);
  expect(threats).toHaveLength(10);
  expect(threats.every((t) => t.count === 1)).toBe(true);
  expect(answers.reduce((sum, r) => sum + r.body.accepted, 0)).toBe(10);
  expect(answers.reduce((sum, r) => sum + r.body.duplicates, 0)).toBe(190);
});

it('counts each event once when a half-delivered batch is retried whole', async () => {
  const a = await freshApp();
  const batch = batchOf(10);
  expect((await ingest(h.baseUrl, a.device, batch.slice(0, 5))).body).toEqual({ accepted: 5, duplicates: 0 });
  expect((await ingest(second.baseUrl, a.device, batch)).body).toEqual({ accepted: 5, duplicates: 5 });
  expect((await ingest(h.baseUrl, a.device, batch)).body).toEqual({ accepted: 0, duplicates: 10 });
  const threats = await listAll(h, a.reader, a.appId);
  expect(threats).toHaveLength(10);
  expect(total(threats)).toBe(10);
});

it('counts an event whose id was claimed by an attempt that stopped before counting it, once', async () => {
  const a = await freshApp();
  const batch = batchOf(4, 'crash');
  // What a process that died right after claiming leaves behind: the claims, no threat, no merge record.
  await claimEventIds(h.deps.repos.threatEventIds, a.appId, batch.map((e) => e.eventId as string), h.clock.now());
  expect(await listAll(h, a.reader, a.appId)).toHaveLength(0);
  h.clock.advance(minutes(1));
  expect((await ingest(h.baseUrl, a.device, batch)).body).toEqual({ accepted: 4, duplicates: 0 });
  expect((await ingest(second.baseUrl, a.device, batch)).body).toEqual({ accepted: 0, duplicates: 4 });
  const threats = await listAll(h, a.reader, a.appId);
  expect(threats.map((t) => t.count)).toEqual([1, 1, 1, 1]);
});

it('merges events with and without ids into one threat with the exact count', async () => {
  const a = await freshApp();
  const withId = (i: number) => event(after(t0, i * 1000), { eventId: `mixed-${String(i).padStart(8, '0')}` });
  await ingest(h.baseUrl, a.device, [withId(0), event(after(t0, 500)), withId(1)]);
  await ingest(second.baseUrl, a.device, [withId(1), withId(2), event(after(t0, 2500))]);
  await ingest(h.baseUrl, a.device, [withId(0), withId(2)]);
  const threats = await listAll(h, a.reader, a.appId);
  expect(threats).toHaveLength(1);
  expect(threats[0].count).toBe(5);
  expect(threats[0].lastOccurredAt).toBe(after(t0, 2500).toISOString());
});

it('counts a repeat of an id within one batch once', async () => {
  const a = await freshApp();
  const e = event(t0, { eventId: 'dup-in-batch-1' });
  expect((await ingest(h.baseUrl, a.device, [e, e, e])).body).toEqual({ accepted: 1, duplicates: 2 });
  expect((await listAll(h, a.reader, a.appId)).map((t) => t.count)).toEqual([1]);
});

it('keeps an id for 24 hours, per app, and counts it again after', async () => {
  const a = await freshApp();
  const b = await freshApp();
  const e = event(t0, { eventId: 'kept-for-a-day' });
  expect((await ingest(h.baseUrl, a.device, [e])).body).toEqual({ accepted: 1, duplicates: 0 });
  expect((await ingest(h.baseUrl, b.device, [e])).body).toEqual({ accepted: 1, duplicates: 0 });
  h.clock.advance(minutes(60 * 23));
  expect((await ingest(second.baseUrl, a.device, [e])).body).toEqual({ accepted: 0, duplicates: 1 });
  h.clock.advance(minutes(61));
  expect((await ingest(second.baseUrl, a.device, [e])).body).toEqual({ accepted: 1, duplicates: 0 });
  expect((await ingest(h.baseUrl, a.device, [e])).body).toEqual({ accepted: 0, duplicates: 1 });
  expect((await listAll(h, a.reader, a.appId)).map((t) => t.count)).toEqual([2]);
  expect((await listAll(h, b.reader, b.appId)).map((t) => t.count)).toEqual([1]);
});

it('counts new observations with ids in their first windows alone, and a retry of them once', async () => {
  const a = await freshApp();
  const batch = [...batchOf(6, 'first'), event(after(t0, 2000), { deviceId: 'device-000002', eventId: 'first-repeat-0002' })];
  expect((await ingest(h.baseUrl, a.device, batch)).body).toEqual({ accepted: 7, duplicates: 0 });
  // Six first windows, one holding two events: no merge record was needed to count any of them.
  expect(await h.deps.db.collection('threat_merges').countDocuments({ appId: a.appId })).toBe(0);
  expect((await ingest(second.baseUrl, a.device, batch)).body).toEqual({ accepted: 0, duplicates: 7 });
  expect((await ingest(h.baseUrl, a.device, batch)).body).toEqual({ accepted: 0, duplicates: 7 });
  const threats = await listAll(h, a.reader, a.appId);
  expect(threats).toHaveLength(6);
  expect(total(threats)).toBe(7);
});

it('finds a retried event in its first window after its device opened more windows than a merge searches', async () => {
  const a = await freshApp();
  const first = event(t0, { eventId: 'deep-retry-00000001' });
  expect((await ingest(h.baseUrl, a.device, [first])).body).toEqual({ accepted: 1, duplicates: 0 });
  // Six later windows of the same merge key (6 minutes apart, no ids): the first window is now below the look-back.
  for (let i = 1; i <= 6; i++) expect((await ingest(second.baseUrl, a.device, [event(after(t0, minutes(6 * i)))])).body).toEqual({ accepted: 1, duplicates: 0 });
  expect((await ingest(second.baseUrl, a.device, [first])).body).toEqual({ accepted: 0, duplicates: 1 });
  expect((await ingest(h.baseUrl, a.device, [first])).body).toEqual({ accepted: 0, duplicates: 1 });
  const threats = await listAll(h, a.reader, a.appId);
  expect(threats).toHaveLength(7);
  expect(total(threats)).toBe(7);
});
