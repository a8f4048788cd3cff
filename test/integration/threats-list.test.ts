// Protects: GET /v1/apps/{id}/threats: newest first by first occurrence, limit 1-100 (default 25), detection filter,
// keyset pages with opaque authenticated cursors (tampered, or reused with another filter or app: 400
// invalid_cursor), no duplicates or gaps while events arrive and merge during paging, another app's id 404, scope
// threats:read; staff over GraphQL: every filter and the daily counts (threats, events, distinct devices).
import { startHarness, bearer, type Harness } from '../support/harness';
import { accessToken, after, event, gql, ingest, list, listAll, minutes } from './threats-support';

let h: Harness;
let appId: string;
let device: string;
let reader: string;
let support: string;
const t0 = new Date('2025-03-14T10:00:00.000Z');
const DETECTIONS = ['root_jailbreak', 'emulator', 'hooking'];

/** 60 threats, one per minute-and-a-bit, cycling detections and devices (so none merge). */
function seedEvents() {
  return Array.from({ length: 60 }, (_, i) =>
    event(after(t0, i * 61_000), { detection: DETECTIONS[i % 3], deviceId: `device-seed-${String(i).padStart(4, '0')}` }),
  );
}

beforeAll(async () => {
  h = await startHarness({ now: after(t0, minutes(24 * 60)) });
  appId = (await h.newApp('enterprise')).appId;
  device = (await h.newKey(appId, ['events:ingest'])).key;
  reader = (await h.newKey(appId, ['threats:read'])).key;
  support = await h.newStaff('support');
  const events = seedEvents();
  expect((await ingest(h.baseUrl, device, events.slice(0, 30))).status).toBe(202);
  expect((await ingest(h.baseUrl, device, events.slice(30))).status).toBe(202);
});
afterAll(async () => h.close());

const key = (t: any) => `${t.occurredAt}|${t.id}`;

describe('pages', () => {
  it('lists newest first, 25 by default, and ends with nextCursor null', async () => {
    const first = await list(h, reader, appId);
    expect(first.status).toBe(200);
    expect(first.body.data).toHaveLength(25);
    expect(first.body.hasMore).toBe(true);
    expect(first.body.data[0].occurredAt).toBe(after(t0, 59 * 61_000).toISOString());
    const all = await listAll(h, reader, appId);
    expect(all).toHaveLength(60);
    const sorted = [...all].sort((a, b) => (key(a) < key(b) ? 1 : -1));
    expect(all.map(key)).toEqual(sorted.map(key));
    const last = await list(h, reader, appId, { limit: 100 });
    expect(last.body).toMatchObject({ hasMore: false, nextCursor: null });
  });

  it('follows cursors without duplicates or gaps for every limit', async () => {
    const expected = (await listAll(h, reader, appId)).map((t) => t.id);
    for (const limit of [1, 7, 60]) {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: any = await list(h, reader, appId, { limit, ...(cursor ? { cursor } : {}) });
        expect(page.body.data.length).toBeLessThanOrEqual(limit);
        seen.push(...page.body.data.map((t: any) => t.id));
        cursor = page.body.nextCursor;
      } while (cursor);
      expect(seen).toEqual(expected);
    }
  });

  it('filters by detection, and the cursor keeps the filter', async () => {
    const hooking = await listAll(h, reader, appId, { detection: 'hooking' });
    expect(hooking).toHaveLength(20);
    expect(hooking.every((t) => t.detection === 'hooking')).toBe(true);
    const page = await list(h, reader, appId, { detection: 'hooking', limit: 5 });
    const next = await list(h, reader, appId, { detection: 'hooking', limit: 5, cursor: page.body.nextCursor });
    expect(next.body.data.every((t: any) => t.detection === 'hooking')).toBe(true);
    expect(next.body.data[0].id).toBe(hooking[5].id);
  });

  it('pages with no duplicates and no gaps while events arrive and merge', async () => {
    const before = await listAll(h, reader, appId);
    const seen: any[] = [];
    let cursor: string | null = null;
    let round = 0;
    const ingesting: Promise<unknown>[] = [];
    do {
      // Between pages, and during them: newer events, late (older) events, and merges into listed threats.
      const merges = before.slice(round * 3, round * 3 + 3).map((t) => {
        const seed = seedEvents().find((e) => e.occurredAt === t.occurredAt)!;
        return { ...seed, occurredAt: after(new Date(t.occurredAt), 30_000).toISOString() };
      });
      ingesting.push(
        ingest(h.baseUrl, device, [
          ...merges,
          event(after(t0, minutes(120) + round * 1000), { deviceId: `device-new-${round}-aaaa` }),
          event(after(t0, -minutes(30) - round * 1000), { deviceId: `device-late-${round}-aaaa` }),
        ]),
      );
      const page: any = await list(h, reader, appId, { limit: 6, ...(cursor ? { cursor } : {}) });
      seen.push(...page.body.data);
      cursor = page.body.nextCursor;
      round++;
    } while (cursor);
    await Promise.all(ingesting);
    const ids = seen.map((t) => t.id);
    expect(new Set(ids).size).toBe(ids.length); // no duplicates
    for (const t of before) expect(ids).toContain(t.id); // no gaps: everything that existed is seen
    // Pages stay in order even though counts changed underneath.
    expect(seen.map(key)).toEqual([...seen].sort((a, b) => (key(a) < key(b) ? 1 : -1)).map(key));
    const merged = (await listAll(h, reader, appId)).filter((t) => t.count > 1);
    expect(merged.length).toBeGreaterThan(0);
  });
});

describe('cursors', () => {
  it('refuses a tampered cursor', async () => {
    const { body } = await list(h, reader, appId, { limit: 5 });
    const cursor: string = body.nextCursor;
    const [payload, mac] = cursor.split('.');
    const forged = JSON.parse(Buffer.from(payload, 'base64url').toString());
    forged.p[0] += 1000;
    const tampered = [
      `${Buffer.from(JSON.stringify(forged)).toString('base64url')}.${mac}`,
      `${payload}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`,
      'not-a-cursor',
      `${payload}.${mac}.x`,
    ];
    for (const c of tampered) {
      const res = await list(h, reader, appId, { limit: 5, cursor: c });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('invalid_cursor');
    }
  });

  it('refuses a cursor reused with another filter or for another app (another limit is the same query)', async () => {
    const { body } = await list(h, reader, appId, { detection: 'hooking', limit: 5 });
    const other = await list(h, reader, appId, { detection: 'emulator', limit: 5, cursor: body.nextCursor });
    expect(other.status).toBe(400);
    expect(other.body.code).toBe('invalid_cursor');
    const none = await list(h, reader, appId, { limit: 5, cursor: body.nextCursor });
    expect(none.status).toBe(400);
    // Another limit is the same query: the cursor stays good.
    expect((await list(h, reader, appId, { detection: 'hooking', limit: 7, cursor: body.nextCursor })).status).toBe(200);

    const { appId: otherApp } = await h.newApp('enterprise');
    const otherReader = (await h.newKey(otherApp, ['threats:read'])).key;
    const crossed = await list(h, otherReader, otherApp, { detection: 'hooking', limit: 5, cursor: body.nextCursor });
    expect(crossed.status).toBe(400);
    expect(crossed.body.code).toBe('invalid_cursor');
  });
});

describe('access', () => {
  it("answers 404 for another app's id and shows it nothing", async () => {
    const { appId: otherApp } = await h.newApp('enterprise');
    const otherReader = (await h.newKey(otherApp, ['threats:read'])).key;
    const res = await list(h, otherReader, appId);
    expect(res.status).toBe(404);
    expect(JSON.stringify(res.body)).not.toContain('thr_');
    expect((await list(h, otherReader, otherApp)).body.data).toEqual([]);
    expect((await list(h, reader, 'app_doesnotexist')).status).toBe(404);
  });

  it('needs threats:read (403); access tokens with it may list', async () => {
    const ingestOnly = (await h.newKey(appId, ['events:ingest'])).key;
    expect((await list(h, ingestOnly, appId)).status).toBe(403);
    const token = await accessToken(h, appId, ['threats:read']);
    expect((await list(h, token, appId, { limit: 1 })).body.data).toHaveLength(1);
  });

  it('refuses limits outside 1-100 and unknown detections with 400', async () => {
    for (const query of [{ limit: 0 }, { limit: 101 }, { limit: 'x' }, { detection: 'malware' }, { sort: 'asc' }]) {
      const res = await list(h, reader, appId, query as unknown as Record<string, string | number>);
      expect(res.status).toBe(400);
    }
  });

  it('never returns device ids', async () => {
    const res = await h.api(`/v1/apps/${appId}/threats?limit=100`, { headers: bearer(reader) });
    const text = await res.text();
    expect(text).not.toContain('device-seed-');
    expect(text).not.toContain('deviceHash');
  });
});

describe('staff over GraphQL', () => {
  // A literal, small page: the query-cost rule prices the connection by its `first`.
  const THREATS = `query($appId: ID!, $filter: ThreatFilter) {
    app(id: $appId) { threats(first: 5, filter: $filter) { nodes { id appId detection verdict platform appVersion buildId occurredAt count } pageInfo { hasNextPage endCursor } } }
  }`;

  it('lists any app with every filter', async () => {
    const { appId: app2 } = await h.newApp('scale');
    const dev2 = (await h.newKey(app2, ['events:ingest'])).key;
    await ingest(h.baseUrl, dev2, [
      event(t0, { verdict: 'suspicious', platform: 'ios', appVersion: '1.0.0', buildId: 'bld_AAAAAAAAAA' }),
      event(after(t0, minutes(10)), { verdict: 'compromised', platform: 'android', appVersion: '1.0.1', buildId: 'bld_BBBBBBBBBB' }),
      event(after(t0, minutes(20)), { detection: 'emulator', verdict: 'clean' }),
    ]);
    const run = async (filter: Record<string, unknown>) => {
      const res = await gql(h, support, THREATS, { appId: app2, filter });
      expect(res.status).toBe(200);
      expect(res.body.errors).toBeUndefined();
      return res.body.data.app.threats.nodes.map((t: any) => t.occurredAt);
    };
    const at = (m: number) => after(t0, minutes(m)).toISOString();
    expect(await run({})).toEqual([at(20), at(10), at(0)]);
    expect(await run({ detection: 'emulator' })).toEqual([at(20)]);
    expect(await run({ verdict: 'suspicious' })).toEqual([at(0)]);
    expect(await run({ platform: 'ios' })).toEqual([at(0)]);
    expect(await run({ appVersion: '1.0.1' })).toEqual([at(10)]);
    expect(await run({ buildId: 'bld_AAAAAAAAAA' })).toEqual([at(0)]);
    expect(await run({ from: at(5), to: at(20) })).toEqual([at(10)]);
    expect(await run({ from: at(10) })).toEqual([at(20), at(10)]);
  });

  it('counts per day and detection: threats, events and distinct devices', async () => {
    const { appId: app3 } = await h.newApp('scale');
    const dev3 = (await h.newKey(app3, ['events:ingest'])).key;
    const day2 = after(t0, minutes(24 * 60));
    await ingest(h.baseUrl, dev3, [
      event(t0, { deviceId: 'device-stats-1' }),
      event(after(t0, minutes(1)), { deviceId: 'device-stats-1' }), // merges: 1 threat, 2 events
      event(after(t0, minutes(30)), { deviceId: 'device-stats-1' }), // new window, same device
      event(after(t0, minutes(40)), { deviceId: 'device-stats-2' }),
      event(after(t0, minutes(50)), { deviceId: 'device-stats-3', detection: 'emulator' }),
      event(day2, { deviceId: 'device-stats-2' }),
    ]);
    const res = await gql(h, support, 'query($a: ID!, $f: DateTime!, $t: DateTime!) { threatStats(appId: $a, from: $f, to: $t) { day detection threats events devices } }', {
      a: app3,
      f: after(t0, -minutes(60)).toISOString(),
      t: after(day2, minutes(60)).toISOString(),
    });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.threatStats).toEqual([
      { day: '2025-03-14', detection: 'emulator', threats: 1, events: 1, devices: 1 },
      { day: '2025-03-14', detection: 'hooking', threats: 3, events: 4, devices: 2 },
      { day: '2025-03-15', detection: 'hooking', threats: 1, events: 1, devices: 1 },
    ]);
  });

  it('bounds the statistics range and finds no app for an unknown id', async () => {
    const tooLong = await gql(h, support, 'query { threatStats(appId: "' + appId + '", from: "2025-01-01T00:00:00Z", to: "2025-06-01T00:00:00Z") { day } }');
    expect(tooLong.body.errors[0].extensions.code).toBe('validation_failed');
    const unknown = await gql(h, support, THREATS, { appId: 'app_unknownapp1' });
    expect(unknown.body).toEqual({ data: { app: null } });
  });
});
