// Protects: baselines and suppressions (docs/baselines.md). Static findings carry a fingerprint stable across builds of
// a package and different for two components; status new/existing against the latest scan of an earlier-registered
// build of the package; the Scan's baseline, diff and fixedFindings. Suppressions (POST/GET/DELETE, audited) accept a
// finding by fingerprint or by rule id: later scans list it with `suppressed` and score without its penalty; once
// expired (the service clock moves) or deleted, the next scan counts it again, lists it in `unsuppressed`, and the
// scan.completed webhook says so. Signature findings cannot be suppressed; bad bodies are 422 problems with field
// errors; another app's id is 404. A scan stored before fingerprints answers nulls and is never a baseline. Two
// instances racing two builds of one package each pick the baseline by registration order. Only release builds set
// the baseline: a branch build (a key that is not a release key) is compared with the latest release build's scan and
// is never a later build's baseline, static or preview. A suppression by fingerprint accepts only a finding of its own
// rule: the fingerprint of another rule's finding with the wrong findingId hides nothing.
import { MongoClient } from 'mongodb';
import { startHarness, bearer, json, readJson, type Harness } from '../support/harness';
import { androidManifest, buildApk, cleanupFixtures } from '../fixtures/build-packages';
import { createDeps, closeDeps } from '../../src/bootstrap';
import { createLogger } from '../../src/core/logger';
import { createJobRunner } from '../../src/jobs';
import { DEFER_MS } from '../../src/jobs/scan-job';
import { scoreAndGrade } from '../../src/scan';
import { getScan, registerBuild, uploadPackage } from './scans-support';

jest.setTimeout(300_000);

let h: Harness;
let appId: string;
let key: string; // a release key
let branchKey: string; // builds and scans, not a release key: a branch job's
let reader: string; // rules:read only
let otherKey: string;

beforeAll(async () => {
  h = await startHarness({ jobs: false });
  appId = (await h.newApp('scale')).appId;
  key = (await h.newKey(appId, ['builds:write', 'builds:read', 'scans:read', 'rules:read', 'rules:write'], 'live', { releaseBuilds: true })).key;
  branchKey = (await h.newKey(appId, ['builds:write', 'builds:read', 'scans:read'])).key;
  reader = (await h.newKey(appId, ['rules:read', 'scans:read'])).key;
  otherKey = (await h.newKey((await h.newApp('scale')).appId, ['rules:read', 'rules:write'])).key;
});
afterAll(async () => {
  await h.close();
  await cleanupFixtures();
});

let packages = 0;
const exported = (name: string) => `<activity android:name=".${name}" android:exported="true"/>`;
/** A release-signed APK of `pkg` exporting the named activities without a permission (one finding each). */
const apk = (pkg: string, activities: string[], versionName = '1.0.0') =>
  buildApk({ manifest: androidManifest({ packageName: pkg, versionName, minSdk: 24, targetSdk: 35, body: activities.map(exported).join('') }), sign: 'release', schemes: { v1: false, v2: true, v3: false } });
const newPackage = () => `com.example.baseline${++packages}`;

/** Registers and uploads a package (release key unless told), runs its job (and any it waited for) here, and returns its static scan (REST). */
async function staticScanOf(file: string, credential = key): Promise<any> {
  h.clock.advance(1_000);
  const build = await uploadPackage(h, credential, file, 'android');
  expect(build.release).toBe(credential === key);
  while (await h.jobs.runDue()) {
    /* run every due job */
  }
  return staticScanOfBuild(build.id);
}
async function staticScanOfBuild(buildId: string): Promise<any> {
  const read = await readJson(await h.api(`/v1/builds/${buildId}`, { headers: bearer(key) }));
  const summary = read.scans.find((s: any) => s.engine === 'static');
  return summary && (await getScan(h, key, summary.id)).body;
}

const byLocation = (scan: any, id: string) => scan.findings.filter((f: any) => f.id === id);
const suppress = (body: unknown, credential = key, app = appId) =>
  h.api(`/v1/apps/${app}/suppressions`, { method: 'POST', headers: json(credential), body: JSON.stringify(body) });
const days = (n: number) => new Date(h.clock.now().getTime() + n * 86_400_000).toISOString();

describe('fingerprints, status and the diff', () => {
  it('keeps a finding\'s fingerprint across builds, tells two components apart, and lists what was fixed', async () => {
    const pkg = newPackage();
    const first = await staticScanOf(await apk(pkg, ['Alpha', 'Beta'], '1.0.0'));
    const alphaBeta = byLocation(first, 'android.exported-activity');
    expect(alphaBeta).toHaveLength(2);
    expect(alphaBeta[0].fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(alphaBeta[0].fingerprint).not.toBe(alphaBeta[1].fingerprint);
    expect(first.baseline).toBeNull();
    expect(first.findings.every((f: any) => f.status === 'new' && f.suppressed === null)).toBe(true);
    expect(first.diff).toEqual({ new: first.findings.length, existing: 0, fixed: 0 });

    const second = await staticScanOf(await apk(pkg, ['Alpha', 'Gamma'], '2.0.0'));
    expect(second.baseline).toEqual({ scanId: first.id, buildId: expect.any(String) });
    const alpha = alphaBeta.find((f: any) => f.detail.includes(`${pkg}.Alpha`));
    const beta = alphaBeta.find((f: any) => f.detail.includes(`${pkg}.Beta`));
    const now = byLocation(second, 'android.exported-activity');
    expect(now.find((f: any) => f.detail.includes(`${pkg}.Alpha`))).toMatchObject({ fingerprint: alpha.fingerprint, status: 'existing' });
    expect(now.find((f: any) => f.detail.includes(`${pkg}.Gamma`))).toMatchObject({ status: 'new' });
    expect(second.fixedFindings).toEqual([{ id: 'android.exported-activity', fingerprint: beta.fingerprint, title: beta.title }]);
    const count = (s: string) => second.findings.filter((f: any) => f.status === s).length;
    expect(second.diff).toEqual({ new: count('new'), existing: count('existing'), fixed: 1 });
    expect(count('new')).toBe(1);
  });

  it('compares a preview with the previous build\'s preview', async () => {
    const one = await registerBuild(h, key, { platform: 'ios', version: '1.0.0-debug', commit: null });
    h.clock.advance(1_000);
    const two = await registerBuild(h, key, { platform: 'ios', version: '1.0.1-debug', commit: null });
    const a = (await getScan(h, key, one.scans[0].id)).body;
    const b = (await getScan(h, key, two.scans[0].id)).body;
    expect(b.baseline).toEqual({ scanId: a.id, buildId: one.id });
    const debugA = a.findings.find((f: any) => f.id === 'preview.version-debug');
    expect(b.findings.find((f: any) => f.id === 'preview.version-debug')).toMatchObject({ fingerprint: debugA.fingerprint, status: 'existing' });
  });
});

describe('release builds set the baseline', () => {
  it('a branch build is compared with the release before it and is never a baseline; the next release build is compared with the release', async () => {
    const pkg = newPackage();
    const release1 = await staticScanOf(await apk(pkg, ['Alpha'], '1.0.0'));
    const branch = await staticScanOf(await apk(pkg, ['Alpha', 'Beta'], '1.1.0-feature'), branchKey);
    expect(branch.baseline).toEqual({ scanId: release1.id, buildId: expect.any(String) });
    const beta = byLocation(branch, 'android.exported-activity').find((f: any) => f.detail.includes('.Beta'));
    expect(beta.status).toBe('new');

    // Had the branch build set the baseline, Beta would read as existing here.
    const release2 = await staticScanOf(await apk(pkg, ['Alpha', 'Beta'], '1.1.0'));
    expect(release2.baseline).toEqual({ scanId: release1.id, buildId: expect.any(String) });
    expect(byLocation(release2, 'android.exported-activity').find((f: any) => f.fingerprint === beta.fingerprint).status).toBe('new');
    expect(release2.diff).toMatchObject({ new: 1 });

    // A release build does set it: the next branch build is compared with release2.
    const branch2 = await staticScanOf(await apk(pkg, ['Alpha', 'Beta'], '1.2.0-feature'), branchKey);
    expect(branch2.baseline).toEqual({ scanId: release2.id, buildId: expect.any(String) });
    expect(branch2.findings.every((f: any) => f.status === 'existing')).toBe(true);
  });

  it('a branch build\'s preview is never the next preview\'s baseline', async () => {
    const release = await registerBuild(h, key, { platform: 'ios', version: '5.0.0', commit: null });
    h.clock.advance(1_000);
    const branch = await registerBuild(h, branchKey, { platform: 'ios', version: '5.1.0-debug', commit: null });
    expect([release.release, branch.release]).toEqual([true, false]);
    h.clock.advance(1_000);
    const next = await registerBuild(h, key, { platform: 'ios', version: '5.1.0-debug', commit: null });
    const branchPreview = (await getScan(h, key, branch.scans[0].id)).body;
    const nextPreview = (await getScan(h, key, next.scans[0].id)).body;
    expect(branchPreview.baseline).toEqual({ scanId: release.scans[0].id, buildId: release.id });
    expect(nextPreview.baseline).toEqual({ scanId: release.scans[0].id, buildId: release.id });
    expect(nextPreview.findings.find((f: any) => f.id === 'preview.version-debug')).toMatchObject({ status: 'new' });
  });
});

describe('suppressions', () => {
  it('by fingerprint, match the findingId too: another rule\'s fingerprint hides nothing', async () => {
    const pkg = newPackage();
    const first = await staticScanOf(await apk(pkg, ['Alpha']));
    const alpha = byLocation(first, 'android.exported-activity')[0];
    const wrong = await readJson(await suppress({ findingId: 'android.allow-backup', fingerprint: alpha.fingerprint, reason: 'Recorded against the wrong rule', expiresAt: days(30) }));
    expect(wrong).toMatchObject({ findingId: 'android.allow-backup', fingerprint: alpha.fingerprint });
    const second = await staticScanOf(await apk(pkg, ['Alpha'], '1.0.1'));
    const alpha2 = second.findings.find((f: any) => f.fingerprint === alpha.fingerprint);
    expect(alpha2).toMatchObject({ id: 'android.exported-activity', suppressed: null });
    expect(second.findings.filter((f: any) => f.suppressed?.id === wrong.id)).toEqual([]);
    expect({ score: second.score, grade: second.grade }).toEqual(scoreAndGrade(second.findings));
    // The same fingerprint under its own rule accepts it.
    const right = await readJson(await suppress({ findingId: alpha.id, fingerprint: alpha.fingerprint, reason: 'Partner entry point', expiresAt: days(30) }));
    const third = await staticScanOf(await apk(pkg, ['Alpha'], '1.0.2'));
    expect(third.findings.find((f: any) => f.fingerprint === alpha.fingerprint).suppressed).toMatchObject({ id: right.id });
  });

  it('accepts a finding by fingerprint and a rule by id: listed with suppressed, no penalty, audited; expiry and deletion bring them back', async () => {
    const pkg = newPackage();
    const webhook = await h.api(`/v1/apps/${appId}/webhooks`, { method: 'POST', headers: json(key), body: JSON.stringify({ url: 'https://hooks.example.com/scans', events: ['scan.completed'], gradeBelow: 'F' }) });
    expect(webhook.status).toBe(201);
    const first = await staticScanOf(await apk(pkg, ['Alpha', 'Beta']));
    const alpha = byLocation(first, 'android.exported-activity').find((f: any) => f.detail.includes('.Alpha'));

    const byPrint = await suppress({ findingId: alpha.id, fingerprint: alpha.fingerprint, reason: 'Partner test entry point, removed in Q3', expiresAt: days(2) });
    expect(byPrint.status).toBe(201);
    const created = await readJson(byPrint);
    expect(created).toEqual({
      id: expect.stringMatching(/^sup_/), appId, findingId: alpha.id, fingerprint: alpha.fingerprint, reason: 'Partner test entry point, removed in Q3',
      expiresAt: days(2), status: 'active', createdBy: expect.stringMatching(/^api_key:/), createdAt: h.clock.now().toISOString(),
    });
    h.clock.advance(1_000);
    const byRule = await readJson(await suppress({ findingId: 'android.allow-backup', reason: 'Legacy backup format, accepted', expiresAt: days(300) }));
    expect(byRule.fingerprint).toBeNull();

    const second = await staticScanOf(await apk(pkg, ['Alpha', 'Beta'], '1.1.0'));
    const alpha2 = second.findings.find((f: any) => f.fingerprint === alpha.fingerprint);
    expect(alpha2.suppressed).toEqual({ id: created.id, reason: created.reason, expiresAt: created.expiresAt });
    expect(byLocation(second, 'android.exported-activity').find((f: any) => f.detail.includes('.Beta')).suppressed).toBeNull();
    const backup = second.findings.find((f: any) => f.id === 'android.allow-backup');
    expect(backup?.suppressed).toMatchObject({ id: byRule.id });
    const unsuppressed = second.findings.filter((f: any) => !f.suppressed);
    expect({ score: second.score, grade: second.grade }).toEqual(scoreAndGrade(unsuppressed));
    expect(second.score).toBeGreaterThan(first.score);

    const list = await readJson(await h.api(`/v1/apps/${appId}/suppressions?limit=1`, { headers: bearer(reader) }));
    expect(list.data.map((s: any) => s.id)).toEqual([byRule.id]);
    expect(list.hasMore).toBe(true);
    const rest = await readJson(await h.api(`/v1/apps/${appId}/suppressions?limit=1&cursor=${encodeURIComponent(list.nextCursor)}`, { headers: bearer(reader) }));
    expect(rest.data.map((s: any) => s.id)).toContain(created.id);
    const audit = await readJson(await h.api(`/v1/apps/${appId}/audit-events?action=suppression.created`, { headers: bearer(key) }));
    expect(audit.data.map((e: any) => e.subject)).toEqual(expect.arrayContaining([`${created.id} ${alpha.id} ${alpha.fingerprint}`, `${byRule.id} android.allow-backup`]));

    // Two days on, the fingerprint's suppression has expired: the next scan counts Alpha again and says so.
    h.clock.advance(2 * 86_400_000 + 1_000);
    const listed = await readJson(await h.api(`/v1/apps/${appId}/suppressions`, { headers: bearer(reader) }));
    expect(listed.data.find((s: any) => s.id === created.id).status).toBe('expired');
    const third = await staticScanOf(await apk(pkg, ['Alpha', 'Beta'], '1.2.0'));
    expect(third.findings.find((f: any) => f.fingerprint === alpha.fingerprint)).toMatchObject({ status: 'existing', suppressed: null });
    expect(third.unsuppressed).toEqual([{ id: alpha.id, fingerprint: alpha.fingerprint, title: alpha.title }]);
    expect(third.score).toBeLessThan(second.score);
    const deliveries = await h.deps.db.collection('webhook_deliveries').find({ appId, type: 'scan.completed' } as never).toArray();
    const bodies = deliveries.map((d: any) => JSON.parse(d.body).data);
    // gradeBelow F: only a scan in which findings came back is sent.
    expect(bodies.map((b: any) => b.id)).toEqual([third.id]);
    expect(bodies[0]).toMatchObject({ diff: third.diff, fixedFindings: [], unsuppressed: third.unsuppressed, unsuppressedCount: 1 });

    // Deleted: the rule's findings count again from the next scan.
    const deleted = await h.api(`/v1/apps/${appId}/suppressions/${byRule.id}`, { method: 'DELETE', headers: bearer(key) });
    expect(deleted.status).toBe(204);
    expect((await h.api(`/v1/apps/${appId}/suppressions/${byRule.id}`, { method: 'DELETE', headers: bearer(key) })).status).toBe(404);
    const fourth = await staticScanOf(await apk(pkg, ['Alpha', 'Beta'], '1.3.0'));
    expect(fourth.unsuppressed.map((f: any) => f.id)).toEqual(['android.allow-backup']);
    const gone = await readJson(await h.api(`/v1/apps/${appId}/audit-events?action=suppression.deleted`, { headers: bearer(key) }));
    expect(gone.data[0]).toMatchObject({ subject: `${byRule.id} android.allow-backup`, reason: 'Legacy backup format, accepted' });
  });

  it('refuses signature findings, bad bodies (422 with field errors), other apps (404) and readers (403)', async () => {
    for (const findingId of ['android.signature-invalid', 'android.signer-changed', 'ios.seal-broken', 'ios.signer-untrusted', 'ios.team-changed']) {
      const res = await suppress({ findingId, reason: 'no', expiresAt: days(10) });
      expect(res.status).toBe(422);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect((await readJson(res)).errors).toEqual([expect.objectContaining({ pointer: '/findingId' })]);
    }
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ findingId: 'android.debuggable', reason: 'x', expiresAt: days(-1) }, '/expiresAt'],
      [{ findingId: 'android.debuggable', reason: 'x', expiresAt: days(367) }, '/expiresAt'],
      [{ findingId: 'android.debuggable', reason: '', expiresAt: days(10) }, '/reason'],
      [{ findingId: 'android.debuggable', reason: 'x'.repeat(501), expiresAt: days(10) }, '/reason'],
      [{ findingId: 'android.debuggable', fingerprint: 'ABC', reason: 'x', expiresAt: days(10) }, '/fingerprint'],
    ];
    for (const [body, pointer] of cases) {
      const res = await suppress(body);
      expect(res.status).toBe(422);
      expect((await readJson(res)).errors.map((e: any) => e.pointer)).toContain(pointer);
    }
    expect((await suppress({ findingId: 'android.debuggable', reason: 'x', expiresAt: days(10) }, otherKey)).status).toBe(404);
    expect((await suppress({ findingId: 'android.debuggable', reason: 'x', expiresAt: days(10) }, reader)).status).toBe(403);
    expect((await h.api(`/v1/apps/${appId}/suppressions`, { headers: bearer(otherKey) })).status).toBe(404);
  });
});

describe('scans stored before fingerprints', () => {
  it('answer nulls and are never a baseline', async () => {
    const pkg = newPackage();
    const file = await apk(pkg, ['Alpha']);
    const old = await uploadPackage(h, key, file, 'android');
    await h.deps.db.collection('scan_jobs').deleteOne({ buildId: old.id } as never);
    const legacy = {
      _id: `scn_legacy${packages}`, appId, buildId: old.id, engine: 'static', grade: 'B', score: 85,
      target: { platform: 'android', name: pkg, version: '0.9' },
      findings: [{ id: 'android.exported-activity', severity: 'medium', title: 'Exported activity without a permission', detail: 'd', fix: 'f' }],
      signing: null, inventory: null, createdAt: h.clock.now(),
    };
    await h.deps.db.collection('scans').insertOne(legacy as never);
    const body = (await getScan(h, key, legacy._id)).body;
    expect(body.findings[0]).toMatchObject({ fingerprint: null, status: null, suppressed: null });
    expect(body).toMatchObject({ baseline: null, diff: null, fixedFindings: [], unsuppressed: [] });
    const next = await staticScanOf(file);
    expect(next.baseline).toBeNull();
    expect(next.findings.every((f: any) => f.status === 'new')).toBe(true);
  });
});

describe('two instances racing two builds of one package', () => {
  it('each scan takes the earlier-registered build\'s scan as baseline, whichever analysis ends first', async () => {
    const mongo = new MongoClient(process.env.TEST_MONGODB_URI!);
    await mongo.connect();
    const second = await createDeps(h.config, { clock: h.clock, mongo, logger: createLogger('silent') });
    const runner = createJobRunner(second);
    try {
      for (let round = 0; round < 2; round++) {
        const pkg = newPackage();
        const base = await staticScanOf(await apk(pkg, ['Alpha']));
        const [fileA, fileB] = await Promise.all([apk(pkg, ['Alpha', 'Beta'], '2.0.0'), apk(pkg, ['Alpha', 'Gamma'], '3.0.0')]);
        h.clock.advance(1_000);
        const a = await uploadPackage(h, key, fileA, 'android');
        h.clock.advance(1_000);
        const b = await uploadPackage(h, key, fileB, 'android');
        // Round 0: both at once on two instances; round 1: the later build's job alone first, so it must wait.
        if (round === 0) await Promise.all([h.jobs.runDue(), runner.runDue()]);
        else {
          const jobB = await h.deps.db.collection('scan_jobs').findOne({ buildId: b.id } as never);
          await h.deps.db.collection('scan_jobs').updateOne({ buildId: a.id } as never, { $set: { runAfter: new Date(h.clock.now().getTime() + 60_000) } });
          expect(await runner.runDue()).toBe(true);
          expect(await h.deps.db.collection('scan_jobs').findOne({ _id: jobB!._id } as never)).toMatchObject({ state: 'queued', deferrals: 1, pendingScan: expect.any(Object) });
          h.clock.advance(60_000);
        }
        for (let i = 0; i < 20 && !((await staticScanOfBuild(a.id)) && (await staticScanOfBuild(b.id))); i++) {
          h.clock.advance(DEFER_MS);
          while ((await h.jobs.runDue()) || (await runner.runDue())) {
            /* drain */
          }
        }
        const scanA = await staticScanOfBuild(a.id);
        const scanB = await staticScanOfBuild(b.id);
        expect(scanA.baseline).toEqual({ scanId: base.id, buildId: expect.any(String) });
        expect(scanB.baseline).toEqual({ scanId: scanA.id, buildId: a.id });
        expect(scanB.fixedFindings.map((f: any) => f.id)).toEqual(['android.exported-activity']);
        // Deferred, not counted: the later job was analysed once and ran as its first counted attempt.
        const jobB = await h.deps.db.collection('scan_jobs').findOne({ buildId: b.id } as never);
        expect(jobB!.state).toBe('done');
        expect(jobB!.attempts - (jobB!.deferrals ?? 0)).toBe(1);
      }
    } finally {
      await closeDeps(second);
    }
  });

  it('a waiting scan runs as soon as the earlier build\'s job ends, not when its wait is over', async () => {
    const pkg = newPackage();
    await staticScanOf(await apk(pkg, ['Alpha']));
    const [fileA, fileB] = await Promise.all([apk(pkg, ['Alpha', 'Beta'], '2.0.0'), apk(pkg, ['Alpha', 'Gamma'], '3.0.0')]);
    h.clock.advance(1_000);
    const a = await uploadPackage(h, key, fileA, 'android');
    h.clock.advance(1_000);
    const b = await uploadPackage(h, key, fileB, 'android');
    const jobs = h.deps.db.collection('scan_jobs');
    // The earlier build's job not due yet: the later one runs first and waits for it.
    await jobs.updateOne({ buildId: a.id } as never, { $set: { runAfter: new Date(h.clock.now().getTime() + 60_000) } });
    expect(await h.jobs.runDue()).toBe(true);
    expect(await jobs.findOne({ buildId: b.id } as never)).toMatchObject({ state: 'queued', deferrals: 1 });
    // The earlier job becomes due and ends; the service's clock does not move from here on.
    await jobs.updateOne({ buildId: a.id } as never, { $set: { runAfter: h.clock.now() } });
    expect(await h.jobs.runDue()).toBe(true);
    expect(await jobs.findOne({ buildId: a.id } as never)).toMatchObject({ state: 'done' });
    expect(await h.jobs.runDue()).toBe(true);
    expect(await jobs.findOne({ buildId: b.id } as never)).toMatchObject({ state: 'done', deferrals: 1 });
    expect((await staticScanOfBuild(b.id)).baseline).toEqual({ scanId: (await staticScanOfBuild(a.id)).id, buildId: a.id });
  });
});
