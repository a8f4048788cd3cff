// Protects: the dashboards' aggregates over seeded data with known numbers: threats per UTC day and detection
// (merge records and folds counted on their threat's day, devices distinct, day boundaries in UTC, narrowing),
// breakdowns biggest first with their builds, builds per day with their latest static grades (`none` without one),
// the latest-grade distribution across apps, refused exchanges per day and reason (counts summed); date ranges and
// the rows read bounded with precise errors; support and admin staff allowed, anyone else refused.
import { randomBytes } from 'node:crypto';
import { startHarness, bearer, json, readJson, type Harness } from '../support/harness';
import { createContext } from '../../src/services/context';
import { sweepThreats, FOLD_AFTER_MS } from '../../src/jobs/threat-retention';
import { buildTrend, latestGradeDistribution, refusedExchanges, threatTrend } from '../../src/services/dashboards-service';
import type { Principal } from '../../src/auth/principal';
import { recordStaticGrade } from '../../src/services/builds/latest-build';
import { event, gql, ingest } from './threats-support';
import { operatorContext } from '../../src/services/operator-context';

const DAY = 86_400_000;
const NOW = new Date('2025-03-20T12:00:00.000Z');
const at = (iso: string) => new Date(iso);
const RANGE = { from: '2025-03-14T00:00:00.000Z', to: '2025-03-16T00:00:00.000Z' };

let h: Harness;
let support: string;
let admin: string;
let appA: string;
let builds: Record<'b1' | 'b2' | 'b3' | 'b4', string>;

async function registerBuild(key: string, version: string, when: string): Promise<string> {
  h.clock.set(at(when));
  const res = await h.api('/v1/builds', { method: 'POST', headers: json(key), body: JSON.stringify({ platform: 'android', version }) });
  expect(res.status).toBe(201);
  return (await readJson(res)).id;
}

/** A static scan as the scan job stores it, its grade copied onto its build and app (what the aggregates read). */
async function staticScan(appId: string, buildId: string, grade: string, when: string): Promise<void> {
  const inserted = await h.deps.repos.scans.insertOnce({
    _id: `scn_${randomBytes(8).toString('hex')}`,
    appId,
    buildId,
    engine: 'static',
    grade,
    score: grade === 'A' ? 95 : grade === 'C' ? 72 : 0,
    target: { platform: 'android', name: 'com.example.app', version: '1.0.0' },
    findings: [],
    createdAt: at(when),
  });
  expect(inserted).toBe(true);
  await recordStaticGrade(operatorContext(h.deps, null), { appId, buildId, grade });
}

const staff = (token: string, query: string, variables?: Record<string, unknown>) => gql(h, token, query, variables);

beforeAll(async () => {
  h = await startHarness({ now: NOW });
  support = await h.newStaff('support');
  admin = await h.newStaff('admin');
  appA = (await h.newApp('enterprise')).appId;
  const writer = (await h.newKey(appA, ['builds:write'])).key;
  // Builds on both sides of a UTC midnight; b1 rescanned (its newest static grade counts), b2 never statically scanned.
  builds = {
    b1: await registerBuild(writer, '2.4.1', '2025-03-17T23:59:00.000Z'),
    b2: await registerBuild(writer, '2.4.2', '2025-03-18T00:00:00.000Z'),
    b3: await registerBuild(writer, '2.4.3', '2025-03-18T05:00:00.000Z'),
    b4: await registerBuild(writer, '2.4.4', '2025-03-18T06:00:00.000Z'),
  };
  await staticScan(appA, builds.b1, 'C', '2025-03-18T00:10:00.000Z');
  await staticScan(appA, builds.b1, 'A', '2025-03-18T00:20:00.000Z');
  await staticScan(appA, builds.b3, 'A', '2025-03-18T05:10:00.000Z');
  await staticScan(appA, builds.b4, 'F', '2025-03-18T06:10:00.000Z');
  h.clock.set(NOW);

  const device = (await h.newKey(appA, ['events:ingest'])).key;
  const a = (iso: string) => event(at(iso), { deviceId: 'device-dash-0001', buildId: builds.b1 });
  // One request: threat A (2 occurrences), B (another device), C (emulator, ios, no build), D (exactly at midnight,
  // another version and build), E (ios), and one a millisecond before the range.
  expect(
    (
      await ingest(h.baseUrl, device, [
        a('2025-03-14T23:58:00.000Z'),
        a('2025-03-14T23:58:10.000Z'),
        event(at('2025-03-14T22:00:00.000Z'), { deviceId: 'device-dash-0002', buildId: builds.b1 }),
        event(at('2025-03-14T10:00:00.000Z'), { deviceId: 'device-dash-0003', detection: 'emulator', platform: 'ios', appVersion: '3.0.0' }),
        event(at('2025-03-15T00:00:00.000Z'), { deviceId: 'device-dash-0001', appVersion: '2.4.2', buildId: builds.b2 }),
        event(at('2025-03-15T08:00:00.000Z'), { deviceId: 'device-dash-0004', platform: 'ios', appVersion: '2.4.2', buildId: builds.b2 }),
        event(at('2025-03-13T23:59:59.999Z'), { deviceId: 'device-dash-0005' }),
      ])
    ).status,
  ).toBe(202);
  // A later request merges two more occurrences into A, one of them after midnight: a merge record, counted on A's
  // day (the 14th), not the 15th.
  expect((await ingest(h.baseUrl, device, [a('2025-03-15T00:02:00.000Z'), a('2025-03-14T23:59:00.000Z')])).status).toBe(202);
});
afterAll(async () => h.close());

const TREND = `query($id: ID!, $range: DateRange!, $platform: Platform, $appVersion: String, $buildId: ID) {
  app(id: $id) { threatTrend(range: $range, platform: $platform, appVersion: $appVersion, buildId: $buildId) { day detection threats events devices } }
}`;

describe('threatTrend', () => {
  it('counts per UTC day and detection: merged threats, events with merge records, distinct devices', async () => {
    const res = await staff(support, TREND, { id: appA, range: RANGE });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.app.threatTrend).toEqual([
      { day: '2025-03-14', detection: 'emulator', threats: 1, events: 1, devices: 1 },
      { day: '2025-03-14', detection: 'hooking', threats: 2, events: 5, devices: 2 },
      { day: '2025-03-15', detection: 'hooking', threats: 2, events: 2, devices: 2 },
    ]);
  });

  it('cuts the range at instants, and counts a threat\'s merge records with it wherever the range starts', async () => {
    const res = await staff(support, TREND, { id: appA, range: { from: '2025-03-14T23:00:00.000Z', to: '2025-03-15T00:00:00.000Z' } });
    expect(res.body.data.app.threatTrend).toEqual([{ day: '2025-03-14', detection: 'hooking', threats: 1, events: 4, devices: 1 }]);
  });

  it('narrows by platform, app version and build', async () => {
    const run = async (narrowing: Record<string, string>) => (await staff(admin, TREND, { id: appA, range: RANGE, ...narrowing })).body.data.app.threatTrend;
    expect(await run({ platform: 'android' })).toEqual([
      { day: '2025-03-14', detection: 'hooking', threats: 2, events: 5, devices: 2 },
      { day: '2025-03-15', detection: 'hooking', threats: 1, events: 1, devices: 1 },
    ]);
    expect(await run({ appVersion: '2.4.2' })).toEqual([{ day: '2025-03-15', detection: 'hooking', threats: 2, events: 2, devices: 2 }]);
    expect(await run({ buildId: builds.b1 })).toEqual([{ day: '2025-03-14', detection: 'hooking', threats: 2, events: 5, devices: 2 }]);
    expect(await run({ platform: 'ios', appVersion: '3.0.0' })).toEqual([{ day: '2025-03-14', detection: 'emulator', threats: 1, events: 1, devices: 1 }]);
  });

  it('counts occurrences folded by the retention sweep once, beside the records not folded yet', async () => {
    const { appId } = await h.newApp('enterprise');
    const device = (await h.newKey(appId, ['events:ingest'])).key;
    const e = event(at('2025-03-20T11:00:00.000Z'), { deviceId: 'device-fold-0001' });
    await ingest(h.baseUrl, device, [e]);
    await ingest(h.baseUrl, device, [e, e]); // a record of 2
    h.clock.advance(FOLD_AFTER_MS + 60_000);
    await ingest(h.baseUrl, device, [e]); // a record of 1, newer than the fold
    // The sweep runs across apps: it folds appA's merge record too, so the tests below count A's occurrences from its
    // fold, and must find the same numbers.
    await sweepThreats(h.deps.repos, h.clock, h.config.threatRetentionDays);
    expect(await h.deps.db.collection('threats').countDocuments({ appId: appA, 'folded.count': 2 })).toBe(1);
    const [threat] = await h.deps.db.collection('threats').find({ appId }).toArray();
    expect(threat.folded?.count).toBe(2);
    const res = await staff(support, TREND, { id: appId, range: { from: '2025-03-20T00:00:00.000Z', to: '2025-03-21T00:00:00.000Z' } });
    expect(res.body.data.app.threatTrend).toEqual([{ day: '2025-03-20', detection: 'hooking', threats: 1, events: 4, devices: 1 }]);
    h.clock.set(NOW);
  });
});

const BREAKDOWN = `query($id: ID!, $range: DateRange!, $by: [ThreatDimension!]!, $first: Int) {
  app(id: $id) { threatBreakdown(range: $range, by: $by, first: $first) { detection platform appVersion buildId build { id version } threats events devices } }
}`;

describe('threatBreakdown', () => {
  it('groups by the chosen dimensions, biggest first, with each row\'s build', async () => {
    const res = await staff(support, BREAKDOWN, { id: appA, range: RANGE, by: ['detection', 'appVersion', 'buildId'] });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.app.threatBreakdown).toEqual([
      { detection: 'hooking', platform: null, appVersion: '2.4.1', buildId: builds.b1, build: { id: builds.b1, version: '2.4.1' }, threats: 2, events: 5, devices: 2 },
      { detection: 'hooking', platform: null, appVersion: '2.4.2', buildId: builds.b2, build: { id: builds.b2, version: '2.4.2' }, threats: 2, events: 2, devices: 2 },
      { detection: 'emulator', platform: null, appVersion: '3.0.0', buildId: null, build: null, threats: 1, events: 1, devices: 1 },
    ]);
  });

  it('counts devices distinct per group, gives one row of totals for no dimension, and stops at `first`', async () => {
    const rows = async (by: string[], first?: number) => (await staff(support, BREAKDOWN, { id: appA, range: RANGE, by, first })).body.data.app.threatBreakdown;
    expect((await rows(['platform'])).map((r: any) => [r.platform, r.threats, r.events, r.devices])).toEqual([
      ['android', 3, 6, 2],
      ['ios', 2, 2, 2],
    ]);
    expect((await rows([])).map((r: any) => [r.detection, r.threats, r.events, r.devices])).toEqual([[null, 5, 8, 4]]);
    expect((await rows(['detection', 'appVersion', 'buildId'], 1)).map((r: any) => r.buildId)).toEqual([builds.b1]);
  });

  it('refuses a dimension listed twice and `first` outside 1 to 100, naming each', async () => {
    const res = await staff(support, BREAKDOWN, { id: appA, range: RANGE, by: ['detection', 'detection'], first: 101 });
    expect(res.body.errors[0].extensions).toMatchObject({
      code: 'validation_failed',
      errors: [
        { pointer: '/by/1', message: 'detection is listed twice' },
        { pointer: '/first', message: 'must be 1 to 100' },
      ],
    });
    const zero = await staff(support, BREAKDOWN, { id: appA, range: RANGE, by: [], first: 0 });
    expect(zero.body.errors[0].extensions.errors).toEqual([{ pointer: '/first', message: 'must be 1 to 100' }]);
  });
});

const BUILD_TREND = `query($id: ID!, $range: DateRange!) { app(id: $id) { buildTrend(range: $range) { day builds grades { grade count } } } }`;

describe('buildTrend and latestGradeDistribution', () => {
  it('counts builds per UTC day with the grade of each one\'s newest static scan, none without one', async () => {
    const res = await staff(support, BUILD_TREND, { id: appA, range: { from: '2025-03-17T00:00:00.000Z', to: '2025-03-19T00:00:00.000Z' } });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.app.buildTrend).toEqual([
      { day: '2025-03-17', builds: 1, grades: [{ grade: 'A', count: 1 }] },
      {
        day: '2025-03-18',
        builds: 3,
        grades: [
          { grade: 'A', count: 1 },
          { grade: 'F', count: 1 },
          { grade: 'none', count: 1 },
        ],
      },
    ]);
    const later = await staff(support, BUILD_TREND, { id: appA, range: { from: '2025-03-18T00:00:00.001Z', to: '2025-03-19T00:00:00.000Z' } });
    expect(later.body.data.app.buildTrend).toEqual([{ day: '2025-03-18', builds: 2, grades: [{ grade: 'A', count: 1 }, { grade: 'F', count: 1 }] }]);
  });

  it('grades the latest build of each app, counting none for one without a static scan and skipping apps without builds', async () => {
    // appA's latest is b4 (F). appB: its latest build has no static scan yet (none), though an older one does.
    // appC: its latest build is A, an older one F. appD: no builds.
    const appB = (await h.newApp()).appId;
    const appC = (await h.newApp()).appId;
    await h.newApp();
    const writerB = (await h.newKey(appB, ['builds:write'])).key;
    const writerC = (await h.newKey(appC, ['builds:write'])).key;
    const oldB = await registerBuild(writerB, '1.0.0', '2025-03-19T08:00:00.000Z');
    await staticScan(appB, oldB, 'A', '2025-03-19T08:05:00.000Z');
    await registerBuild(writerB, '1.0.1', '2025-03-19T09:00:00.000Z');
    const oldC = await registerBuild(writerC, '5.0.0', '2025-03-19T08:00:00.000Z');
    await staticScan(appC, oldC, 'F', '2025-03-19T08:05:00.000Z');
    const newC = await registerBuild(writerC, '5.0.1', '2025-03-19T10:00:00.000Z');
    await staticScan(appC, newC, 'A', '2025-03-19T10:05:00.000Z');
    h.clock.set(NOW);

    const res = await staff(support, '{ latestGradeDistribution { grade count } }');
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.latestGradeDistribution).toEqual([
      { grade: 'A', count: 1 },
      { grade: 'F', count: 1 },
      { grade: 'none', count: 1 },
    ]);
  });
});

describe('the latest-build summary latestGradeDistribution reads', () => {
  const summaryOf = async (appId: string) => (await h.deps.repos.apps.findById(appId))!.latestBuild;
  const distribution = async () => (await staff(support, '{ latestGradeDistribution { grade count } }')).body.data.latestGradeDistribution;
  const countOf = (rows: { grade: string; count: number }[], grade: string) => rows.find((r) => r.grade === grade)?.count ?? 0;

  it('keeps the newest of builds registered at once, whichever write lands last (ties by id)', async () => {
    const { appId } = await h.newApp();
    expect(await summaryOf(appId)).toBeNull(); // a new app: no builds yet
    const writer = (await h.newKey(appId, ['builds:write'])).key;
    // Two registrations at once, at the same instant: the greater id is the newest, as App.latestBuild orders them.
    h.clock.set(at('2025-03-19T11:00:00.000Z'));
    const post = (version: string) => h.api('/v1/builds', { method: 'POST', headers: json(writer), body: JSON.stringify({ platform: 'ios', version }) });
    const both = await Promise.all([post('7.0.0'), post('7.0.1')]);
    expect(both.map((r) => r.status)).toEqual([201, 201]);
    const ids = await Promise.all(both.map(async (r) => (await readJson(r)).id as string));
    const newest = (await h.deps.repos.builds.latest(appId, null))!;
    expect(newest._id).toBe([...ids].sort().at(-1));
    expect(await summaryOf(appId)).toEqual({ id: newest._id, createdAt: newest.createdAt, platform: 'ios', grade: null });

    // A later build whose summary write lands first, then an earlier one's: the later one stays.
    const later = { id: 'bld_summary_later', createdAt: at('2025-03-19T12:00:00.000Z'), platform: 'android' as const, grade: null };
    const earlier = { id: 'bld_summary_zzzz', createdAt: at('2025-03-19T11:30:00.000Z'), platform: 'ios' as const, grade: null };
    expect(await h.deps.repos.apps.recordLatestBuild(appId, later)).toBe(true);
    expect(await h.deps.repos.apps.recordLatestBuild(appId, earlier)).toBe(false);
    // Same instant: the smaller id loses, the greater wins.
    expect(await h.deps.repos.apps.recordLatestBuild(appId, { ...later, id: 'bld_summary_laten' })).toBe(false);
    expect(await h.deps.repos.apps.recordLatestBuild(appId, { ...later, id: 'bld_summary_latez' })).toBe(true);
    expect(await summaryOf(appId)).toEqual({ ...later, id: 'bld_summary_latez' });
    h.clock.set(NOW);
  });

  it('takes the grade of the latest build\'s static scan, and not of an older build\'s', async () => {
    const { appId } = await h.newApp();
    const writer = (await h.newKey(appId, ['builds:write'])).key;
    const old = await registerBuild(writer, '1.0.0', '2025-03-19T08:00:00.000Z');
    const latest = await registerBuild(writer, '1.0.1', '2025-03-19T09:00:00.000Z');
    h.clock.set(NOW);
    const before = await distribution();
    await staticScan(appId, old, 'A', '2025-03-19T09:05:00.000Z');
    expect(await summaryOf(appId)).toMatchObject({ id: latest, grade: null });
    expect(await distribution()).toEqual(before);
    await staticScan(appId, latest, 'D', '2025-03-19T09:10:00.000Z');
    expect(await summaryOf(appId)).toMatchObject({ id: latest, grade: 'D' });
    const after = await distribution();
    expect(countOf(after, 'none')).toBe(countOf(before, 'none') - 1);
    expect(countOf(after, 'D')).toBe(countOf(before, 'D') + 1);
  });

  it('reads an app created before the summary existed the old way once, and writes its summary', async () => {
    const { appId } = await h.newApp();
    const empty = (await h.newApp()).appId;
    const writer = (await h.newKey(appId, ['builds:write'])).key;
    await registerBuild(writer, '3.0.0', '2025-03-19T08:00:00.000Z');
    const latest = await registerBuild(writer, '3.0.1', '2025-03-19T09:00:00.000Z');
    await staticScan(appId, latest, 'B', '2025-03-19T09:05:00.000Z');
    h.clock.set(NOW);
    const before = await distribution();
    // As stored before the field existed: no latestBuild at all.
    const apps = h.deps.db.collection('apps');
    await apps.updateMany({ _id: { $in: [appId, empty] } } as never, { $unset: { latestBuild: '' } });
    expect(await summaryOf(appId)).toBeUndefined();

    expect(await distribution()).toEqual(before); // same answer, from the builds and scans
    const latestDoc = (await h.deps.repos.builds.findById(appId, latest))!;
    expect(await summaryOf(appId)).toEqual({ id: latest, createdAt: latestDoc.createdAt, platform: 'android', grade: 'B' });
    expect(await summaryOf(empty)).toBeNull(); // written too: no builds, skipped as before
    // From now on the summary is what counts: a change to it shows, though the builds did not change.
    await apps.updateOne({ _id: appId } as never, { $set: { 'latestBuild.grade': 'F' } });
    const after = await distribution();
    expect(countOf(after, 'B')).toBe(countOf(before, 'B') - 1);
    expect(countOf(after, 'F')).toBe(countOf(before, 'F') + 1);
    await apps.updateOne({ _id: appId } as never, { $set: { 'latestBuild.grade': 'B' } });

    // A build registered for an app without the field writes it as well.
    await apps.updateOne({ _id: empty } as never, { $unset: { latestBuild: '' } });
    const first = await registerBuild((await h.newKey(empty, ['builds:write'])).key, '1.0.0', '2025-03-19T10:00:00.000Z');
    h.clock.set(NOW);
    expect(await summaryOf(empty)).toMatchObject({ id: first, grade: null });
  });
});

const APP_REFUSALS = `query($id: ID!, $range: DateRange!) { app(id: $id) { refusedExchanges(range: $range) { day reason count } } }`;
const ALL_REFUSALS = `query($range: DateRange!) { refusedExchanges(range: $range) { day reason count } }`;

describe('refusedExchanges', () => {
  const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  // Refused before any key is fetched: not a JWS at all, and a JWS whose header names no key.
  const MALFORMED = 'this-is-not-a-jws-token-at-all';
  const NO_KID = `${b64({ alg: 'RS256', typ: 'JWT' })}.${b64({ sub: 'repo:octo-org/octo-repo:ref:refs/heads/main' })}.${'A'.repeat(342)}`;
  const exchange = async (appId: string, token: string) => {
    const res = await h.api('/v1/auth/oidc', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.9.${randomBytes(1)[0]}.${1 + (randomBytes(1)[0] % 250)}` },
      body: JSON.stringify({ token, appId }),
    });
    expect(res.status).toBe(401);
  };

  it('sums the counts of oidc.denied entries per UTC day and reason, of one app and of every app', async () => {
    const app1 = (await h.newApp()).appId;
    const app2 = (await h.newApp()).appId;
    h.clock.set(at('2025-03-18T23:59:10.000Z'));
    for (let i = 0; i < 3; i++) await exchange(app1, MALFORMED); // one entry counting 3
    await exchange(app1, NO_KID);
    await exchange(app2, MALFORMED);
    h.clock.set(at('2025-03-19T00:00:05.000Z'));
    for (let i = 0; i < 2; i++) await exchange(app1, MALFORMED); // the next minute, and the next UTC day
    h.clock.set(NOW);
    // Other actions of the trail are not refusals.
    const rules = (await h.newKey(app1, ['rules:read'])).key;
    expect((await h.api(`/v1/apps/${app1}/oidc-rules/dry-run`, { method: 'POST', headers: json(rules), body: JSON.stringify({ claims: { sub: 'repo:a/b:ref:refs/heads/main' } }) })).status).toBe(200);

    const reasons = (await h.deps.repos.audit.list(app1, { limit: 10, action: 'oidc.denied' })).data.map((e) => e.reason);
    expect(new Set(reasons)).toEqual(new Set(['malformed', 'no_kid']));

    const range = { from: '2025-03-18T00:00:00.000Z', to: '2025-03-20T00:00:00.000Z' };
    const one = await staff(support, APP_REFUSALS, { id: app1, range });
    expect(one.body.errors).toBeUndefined();
    expect(one.body.data.app.refusedExchanges).toEqual([
      { day: '2025-03-18', reason: 'malformed', count: 3 },
      { day: '2025-03-18', reason: 'no_kid', count: 1 },
      { day: '2025-03-19', reason: 'malformed', count: 2 },
    ]);
    const all = await staff(support, ALL_REFUSALS, { range });
    expect(all.body.data.refusedExchanges).toEqual([
      { day: '2025-03-18', reason: 'malformed', count: 4 },
      { day: '2025-03-18', reason: 'no_kid', count: 1 },
      { day: '2025-03-19', reason: 'malformed', count: 2 },
    ]);
    const firstDay = await staff(support, ALL_REFUSALS, { range: { from: range.from, to: '2025-03-19T00:00:00.000Z' } });
    expect(firstDay.body.data.refusedExchanges.map((r: any) => r.day)).toEqual(['2025-03-18', '2025-03-18']);
  });
});

describe('bounds', () => {
  it('refuses a range that is empty, reversed or longer than 92 days, pointing at it', async () => {
    const reversed = await staff(support, ALL_REFUSALS, { range: { from: RANGE.to, to: RANGE.from } });
    expect(reversed.body.errors[0].extensions).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '/range/to', message: 'must be after range.from' }] });
    const empty = await staff(support, TREND, { id: appA, range: { from: RANGE.from, to: RANGE.from } });
    expect(empty.body.errors[0].extensions.errors).toEqual([{ pointer: '/range/to', message: 'must be after range.from' }]);
    const long = await staff(support, BUILD_TREND, { id: appA, range: { from: '2025-01-01T00:00:00.000Z', to: new Date(Date.parse('2025-01-01T00:00:00.000Z') + 92 * DAY + 1).toISOString() } });
    expect(long.body.errors[0].extensions.errors).toEqual([{ pointer: '/range', message: 'may span at most 92 days' }]);
    const longest = await staff(support, BUILD_TREND, { id: appA, range: { from: '2025-01-01T00:00:00.000Z', to: new Date(Date.parse('2025-01-01T00:00:00.000Z') + 92 * DAY).toISOString() } });
    expect(longest.body.errors).toBeUndefined();
  });

  it('reads at most DASHBOARD_MAX_ROWS rows per aggregate and DASHBOARD_MAX_APPS apps, refusing beyond with the bound named', async () => {
    const small = await startHarness({ now: NOW, env: { DASHBOARD_MAX_ROWS: '4', DASHBOARD_MAX_APPS: '2' } });
    try {
      const token = await small.newStaff('support');
      const { appId } = await small.newApp();
      const device = (await small.newKey(appId, ['events:ingest'])).key;
      const writer = (await small.newKey(appId, ['builds:write'])).key;
      const e = (i: number) => event(at(`2025-03-20T0${i}:00:00.000Z`), { deviceId: `device-cap-000${i}` });
      await ingest(small.baseUrl, device, [e(1), e(2), e(3)]);
      await ingest(small.baseUrl, device, [e(1)]); // 3 threats and 1 merge record: 4 rows, at the bound
      const range = { from: '2025-03-20T00:00:00.000Z', to: '2025-03-21T00:00:00.000Z' };
      const ask = (query: string, variables: Record<string, unknown>) => gql(small, token, query, variables);
      expect((await ask(TREND, { id: appId, range })).body.data.app.threatTrend).toEqual([{ day: '2025-03-20', detection: 'hooking', threats: 3, events: 4, devices: 3 }]);
      await ingest(small.baseUrl, device, [e(4)]);
      const over = await ask(TREND, { id: appId, range });
      expect(over.body.errors[0].extensions).toMatchObject({
        code: 'validation_failed',
        errors: [{ pointer: '/range', message: 'more than 4 threats and merge records in the range; narrow it' }],
      });
      expect((await ask(BREAKDOWN, { id: appId, range, by: ['detection'] })).body.errors[0].extensions.code).toBe('validation_failed');
      // Narrower, it answers again.
      expect((await ask(TREND, { id: appId, range: { from: range.from, to: '2025-03-20T04:00:00.000Z' } })).body.errors).toBeUndefined();

      for (let i = 0; i < 5; i++) {
        const res = await small.api('/v1/builds', { method: 'POST', headers: json(writer), body: JSON.stringify({ platform: 'ios', version: `1.0.${i}` }) });
        expect(res.status).toBe(201);
      }
      const builds = await ask(BUILD_TREND, { id: appId, range: { from: '2025-03-20T00:00:00.000Z', to: '2025-03-21T00:00:00.000Z' } });
      expect(builds.body.errors[0].extensions.errors).toEqual([{ pointer: '/range', message: 'more than 4 builds in the range; narrow it' }]);

      await small.newApp();
      const apps = await gql(small, token, '{ latestGradeDistribution { grade count } }');
      expect(apps.body.data.latestGradeDistribution).toEqual([{ grade: 'none', count: 1 }]); // 2 apps: at the bound
      await small.newApp();
      const tooMany = await gql(small, token, '{ latestGradeDistribution { grade count } }');
      expect(tooMany.body.errors[0].extensions.errors).toEqual([{ pointer: '', message: 'more than 2 apps; the distribution visits at most 2 (DASHBOARD_MAX_APPS)' }]);
    } finally {
      await small.close();
    }
  });
});

describe('who may ask', () => {
  it('answers support and admin staff over GraphQL, and refuses API keys there', async () => {
    for (const token of [support, admin]) {
      const res = await staff(token, `query($range: DateRange!) { latestGradeDistribution { grade } refusedExchanges(range: $range) { day } }`, { range: RANGE });
      expect(res.body.errors).toBeUndefined();
    }
    const { key } = await h.newKey(appA, ['threats:read', 'builds:read', 'rules:read']);
    const res = await h.api('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(key) },
      body: JSON.stringify({ query: TREND, variables: { id: appA, range: RANGE } }),
    });
    expect(res.status).toBe(401);
  });

  it('lets an app credential read its own app\'s aggregates with the scope each needs, never another app\'s nor the cross-app ones', async () => {
    const range = { from: at(RANGE.from), to: at(RANGE.to) };
    const credential = (scopes: string[], appId = appA): Principal =>
      ({ kind: 'api_key', appId, org: 'org', plan: 'enterprise', keyId: 'key_test', mode: 'live', scopes, expiresAt: null }) as Principal;
    const as = (p: Principal) => createContext(h.deps, p);
    expect(await threatTrend(as(credential(['threats:read'])), { appId: appA, range })).toHaveLength(3);
    await expect(threatTrend(as(credential(['builds:read'])), { appId: appA, range })).rejects.toMatchObject({ code: 'insufficient_scope' });
    const other = (await h.newApp()).appId;
    await expect(threatTrend(as(credential(['threats:read'], other)), { appId: appA, range })).rejects.toMatchObject({ code: 'not_found' });
    await expect(buildTrend(as(credential(['threats:read'])), { appId: appA, range })).rejects.toMatchObject({ code: 'insufficient_scope' });
    expect(await buildTrend(as(credential(['builds:read'])), { appId: appA, range })).toEqual([]);
    await expect(refusedExchanges(as(credential(['rules:read'])), { appId: null, range })).rejects.toMatchObject({ code: 'insufficient_scope' });
    expect(await refusedExchanges(as(credential(['rules:read'])), { appId: appA, range })).toEqual([]);
    await expect(latestGradeDistribution(as(credential(['threats:read', 'builds:read', 'rules:read'])))).rejects.toMatchObject({ code: 'insufficient_scope' });
    await expect(latestGradeDistribution(as({ kind: 'anonymous' }))).rejects.toMatchObject({ code: 'unauthorized' });
    // Staff name any app; an unknown one is not found.
    await expect(threatTrend(as({ kind: 'staff', staffId: 'stf_x', role: 'support' }), { appId: 'app_unknown000', range })).rejects.toMatchObject({ code: 'not_found' });
  });
});
