// Protects: GET /v1/apps/{id}/threats/export streams every threat first seen in [from, to) as NDJSON, one Threat per
// line exactly as the list shows it (merged counts included), across many internal pages; only for the app's own
// readers; a bad range is a problem before any line is sent; at most EXPORTS_PER_APP exports of an app and
// EXPORTS_PER_INSTANCE in all run at once, each freeing its place when it ends; a reader that stalls is let go.
import { bearer, readJson, type Harness, startHarness } from '../support/harness';
import { after, event, ingest, listAll, minutes } from './threats-support';
import { Writable } from 'node:stream';
import { EXPORT_RETRY_AFTER_S, EXPORTS_PER_APP, EXPORTS_PER_INSTANCE } from '../../src/threats/export-budget';
import { drained } from '../../rest/handlers/threats';

let h: Harness;
const t0 = new Date('2025-03-14T10:00:00.000Z');

beforeAll(async () => {
  h = await startHarness({ now: after(t0, minutes(24 * 60)) });
});
afterAll(async () => {
  await h.close();
});

async function freshApp() {
  const { appId } = await h.newApp('enterprise');
  return { appId, device: (await h.newKey(appId, ['events:ingest'])).key, reader: (await h.newKey(appId, ['threats:read'])).key };
}

const exportOf = (key: string, appId: string, from: string, to: string) =>
  h.api(`/v1/apps/${appId}/threats/export?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`, { headers: bearer(key) });

it('streams every threat of the range as NDJSON, as the list shows them', async () => {
  const a = await freshApp();
  // 1,200 threats over 20 hours (more than two internal pages), each merged once more by a second request.
  for (let b = 0; b < 12; b++) {
    const batch = Array.from({ length: 100 }, (_, i) => event(after(t0, (b * 100 + i) * 60_000), { deviceId: `device-${String(b * 100 + i).padStart(6, '0')}` }));
    await ingest(h.baseUrl, a.device, batch);
    if (b % 4 === 0) await ingest(h.baseUrl, a.device, batch);
  }
  const from = after(t0, 60 * 60_000).toISOString();
  const to = after(t0, 1_150 * 60_000).toISOString();
  const res = await exportOf(a.reader, a.appId, from, to);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
  const text = await res.text();
  expect(text.endsWith('\n')).toBe(true);
  const lines = text.trimEnd().split('\n').map((l) => JSON.parse(l));
  const listed = (await listAll(h, a.reader, a.appId)).filter((t) => t.occurredAt >= from && t.occurredAt < to);
  expect(lines).toHaveLength(1_090);
  expect(lines).toEqual(listed);
  expect(lines.every((t) => t.occurredAt >= from && t.occurredAt < to)).toBe(true);
  expect(lines.filter((t) => t.count === 2)).toHaveLength(300 - 60);
});

it('answers an empty range with no lines, and refuses a backwards one', async () => {
  const a = await freshApp();
  const empty = await exportOf(a.reader, a.appId, '2020-01-01T00:00:00Z', '2020-01-02T00:00:00Z');
  expect(empty.status).toBe(200);
  expect(await empty.text()).toBe('');
  const backwards = await exportOf(a.reader, a.appId, '2020-01-02T00:00:00Z', '2020-01-01T00:00:00Z');
  expect(backwards.status).toBe(422);
  expect((await readJson(backwards)).errors[0].pointer).toBe('/to');
  const missing = await h.api(`/v1/apps/${a.appId}/threats/export?from=2020-01-01T00:00:00Z`, { headers: bearer(a.reader) });
  expect([400, 422]).toContain(missing.status);
});

it('is 404 for another app and 403 without threats:read', async () => {
  const a = await freshApp();
  const b = await freshApp();
  expect((await exportOf(a.reader, b.appId, t0.toISOString(), after(t0, 1000).toISOString())).status).toBe(404);
  const writer = (await h.newKey(a.appId, ['builds:write'])).key;
  expect((await exportOf(writer, a.appId, t0.toISOString(), after(t0, 1000).toISOString())).status).toBe(403);
});

it('runs at most EXPORTS_PER_APP exports of an app at once: the next is refused 429 with Retry-After until one ends', async () => {
  const a = await freshApp();
  const b = await freshApp();
  const range = [t0.toISOString(), after(t0, 24 * 60 * 60_000).toISOString()] as const;
  const running = h.deps.instance.exports;
  const held = Array.from({ length: EXPORTS_PER_APP }, () => running.acquire(a.appId)); // two exports being read
  const refused = await exportOf(a.reader, a.appId, ...range);
  expect(refused.status).toBe(429);
  expect(refused.headers.get('retry-after')).toBe(String(EXPORT_RETRY_AFTER_S));
  expect((await readJson(refused)).code).toBe('rate_limited');
  const other = await exportOf(b.reader, b.appId, ...range); // another app is not held up
  expect(other.status).toBe(200);
  await other.text();
  held[0]();
  for (let i = 0; i < 2; i++) {
    // Each finished export gives its place back: the next one runs.
    const ok = await exportOf(a.reader, a.appId, ...range);
    expect(ok.status).toBe(200);
    await ok.text();
  }
  held[1]();
});

it('runs at most EXPORTS_PER_INSTANCE exports on an instance, whatever their apps: then 503 with Retry-After', async () => {
  const a = await freshApp();
  const running = h.deps.instance.exports;
  const held = Array.from({ length: EXPORTS_PER_INSTANCE }, (_, i) => running.acquire(`app_held_${i}`));
  const refused = await exportOf(a.reader, a.appId, t0.toISOString(), after(t0, 60_000).toISOString());
  expect(refused.status).toBe(503);
  expect(refused.headers.get('retry-after')).toBe(String(EXPORT_RETRY_AFTER_S));
  held.forEach((release) => release());
  expect((await exportOf(a.reader, a.appId, t0.toISOString(), after(t0, 60_000).toISOString())).status).toBe(200);
});

it('gives up on a reader that takes nothing: the drain wait ends as stalled, not never', async () => {
  const stuck = new Writable({ highWaterMark: 1, write: () => undefined }); // never takes the chunk
  expect(stuck.write('line\n')).toBe(false);
  expect(await drained(stuck, 50)).toBe('stalled');
  const taking = new Writable({ highWaterMark: 1, write: (_chunk, _enc, done) => setTimeout(done, 5) });
  expect(taking.write('line\n')).toBe(false);
  expect(await drained(taking, 1_000)).toBe('drained');
  expect(taking.write('line\n')).toBe(false);
  const gone = drained(taking, 1_000);
  taking.destroy();
  expect(await gone).toBe('closed');
});
