// Protects: the merge rule is atomic across instances without transactions. The same event ingested at once by two
// instances (and many requests) ends as one Threat with the exact count; racing to open the next window of a key
// opens it once; a whole batch ingested twice at once counts every event twice and creates every threat once; and
// racing events of different times never lose or double-count an event, nor stretch a window past 5 minutes.
import { startHarness, type Harness } from '../support/harness';
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

/** Sends each batch as its own request, alternating between the two instances, all at once. */
async function burst(device: string, batches: unknown[][]): Promise<void> {
  const results = await Promise.all(batches.map((b, i) => ingest(i % 2 ? second.baseUrl : h.baseUrl, device, b)));
  for (const r of results) expect(r.status).toBe(202);
}

it('merges the same event sent 20 times at once through two instances into one threat of count 20', async () => {
  const a = await freshApp();
  await burst(a.device, Array.from({ length: 20 }, () => [event(t0)]));
  const threats = await listAll(h, a.reader, a.appId);
  expect(threats.map((t) => t.count)).toEqual([20]);
});

it('opens the next window of a key once when many ingests race to open it', async () => {
  const a = await freshApp();
  await ingest(h.baseUrl, a.device, [event(t0)]);
  await burst(a.device, Array.from({ length: 12 }, () => [event(after(t0, minutes(6)))]));
  await burst(a.device, Array.from({ length: 12 }, () => [event(after(t0, minutes(12)))]));
  const threats = await listAll(h, a.reader, a.appId);
  expect(threats.map((t) => [t.occurredAt, t.count])).toEqual([
    [after(t0, minutes(12)).toISOString(), 12],
    [after(t0, minutes(6)).toISOString(), 12],
    [t0.toISOString(), 1],
  ]);
});

it('creates every threat of a batch once when the whole batch is ingested twice at once', async () => {
  const a = await freshApp();
  const batch = Array.from({ length: 100 }, (_, i) => event(after(t0, i * 1000), { deviceId: `device-${String(i).padStart(6, '0')}` }));
  await burst(a.device, [batch, batch]);
  const threats = await listAll(h, a.reader, a.appId);
  expect(threats).toHaveLength(100);
  expect(threats.every((t) => t.count === 2)).toBe(true);
});

it('never loses or double-counts racing events of different times, and keeps every window within 5 minutes', async () => {
  const a = await freshApp();
  const times = Array.from({ length: 30 }, (_, i) => after(t0, i * 20_000)); // 10 minutes of events, one device
  await burst(a.device, times.map((t) => [event(t)]));
  const threats = await listAll(h, a.reader, a.appId);
  expect(threats.reduce((sum, t) => sum + t.count, 0)).toBe(30);
  for (const t of threats) {
    expect(Date.parse(t.lastOccurredAt) - Date.parse(t.occurredAt)).toBeLessThanOrEqual(minutes(5));
    expect(Date.parse(t.lastOccurredAt)).toBeGreaterThanOrEqual(Date.parse(t.occurredAt));
  }
  // Each window starts at an event that no earlier window held: at least 2 windows for 10 minutes, far fewer than 30.
  expect(threats.length).toBeGreaterThanOrEqual(2);
  expect(threats.length).toBeLessThan(30);
});

it('finds the newest of many windows from an instance that has seen none of them', async () => {
  const a = await freshApp();
  for (let w = 0; w < 11; w++) await ingest(h.baseUrl, a.device, [event(after(t0, w * minutes(6)))]);
  // The second instance knows nothing of this key: it must find generation 10 by probing and merge into it.
  await ingest(second.baseUrl, a.device, [event(after(t0, 10 * minutes(6) + minutes(2)))]);
  await ingest(second.baseUrl, a.device, [event(after(t0, 11 * minutes(6)))]);
  const threats = await listAll(h, a.reader, a.appId);
  expect(threats).toHaveLength(12);
  expect(threats.slice(0, 2).map((t) => [t.occurredAt, t.count])).toEqual([
    [after(t0, 11 * minutes(6)).toISOString(), 1],
    [after(t0, 10 * minutes(6)).toISOString(), 2],
  ]);
});
