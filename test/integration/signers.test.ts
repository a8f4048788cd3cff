// Protects: the signer named and signing continuity (docs/scan-evidence.md). A static scan carries `signing` with the
// certificate digests apksigner prints, in REST and GraphQL; previews carry null. The first verified scan of a package
// records its signer; a later package re-signed by a stranger gets critical android.signer-changed and a lower grade,
// and the record stays; a v3 lineage (apksigner rotate) proves a rotation: low android.signer-rotated, and the record
// moves; an operator's re-key (POST, audited signer.recorded) makes the new signer pass; unverified signatures never
// record; concurrent first scans of one package, on two instances, record exactly one signer; another app's id is
// 404, a key without the scope 403, a bad body a 422 naming its fields. Only release builds record: a branch build
// (a key that is not a release key) of a package with no record gets no verdict (`unrecorded`) and records nothing,
// so the release build after it records its own signer; a branch build signed otherwise than the release's record
// gets android.signer-changed and leaves the record as it was. iOS: the team identifies only with the key Apple's
// chain gives; the leaf's key is pinned, a new key of the team is low ios.signing-key-renewed (a release build pins it).
import { MongoClient } from 'mongodb';
import { startHarness, bearer, json, readJson, type Harness } from '../support/harness';
import { androidManifest, buildApk, cleanupFixtures, keystore } from '../fixtures/build-packages';
import { cleanupSignerFixtures, otherKeystore, printedLineage, printedSchemes, printedSigners, resignApk, rotateApk } from '../fixtures/signer-packages';
import { createDeps, closeDeps } from '../../src/bootstrap';
import { createLogger } from '../../src/core/logger';
import type { Deps } from '../../src/core/deps';
import { DEFER_MS, runScanJob } from '../../src/jobs/scan-job';
import { DEFAULT_RUNNER_OPTIONS } from '../../src/jobs';
import { scoreAndGrade } from '../../src/scan';
import { checkSigningContinuity } from '../../src/services/signing-continuity';
import type { AndroidSigning, IosSigning } from '../../src/scan/model/types';
import { getScan, registerBuild, uploadPackage } from './scans-support';
import { operatorContext } from '../../src/services/operator-context';

let h: Harness;
let appId: string;
let key: string; // builds, scans and rules; a release key
let branchKey: string; // builds and scans, not a release key: a branch job's
let readOnly: string; // builds:read and scans:read: may list signers, not record one
let scansOnly: string; // no builds:read: may not list them
let otherKey: string; // another app, every scope
let admin: string;

beforeAll(async () => {
  // No background runner: each test runs the jobs it queued, so it knows which scan ran when.
  h = await startHarness({ jobs: false });
  appId = (await h.newApp('scale')).appId;
  key = (await h.newKey(appId, ['builds:write', 'builds:read', 'scans:read', 'rules:read', 'rules:write'], 'live', { releaseBuilds: true })).key;
  branchKey = (await h.newKey(appId, ['builds:write', 'builds:read', 'scans:read'])).key;
  readOnly = (await h.newKey(appId, ['builds:read', 'scans:read'])).key;
  scansOnly = (await h.newKey(appId, ['scans:read', 'rules:write'])).key;
  const other = await h.newApp('scale');
  otherKey = (await h.newKey(other.appId, ['builds:write', 'builds:read', 'scans:read', 'rules:read', 'rules:write'])).key;
  admin = await h.newStaff('admin');
});
afterAll(async () => {
  await h.close();
  await cleanupFixtures();
  await cleanupSignerFixtures();
});

let packages = 0;
/** An APK of a package no other test uses, signed with the release key by v1, v2 and v3. */
const releaseApk = () =>
  buildApk({ manifest: androidManifest({ packageName: `com.example.signers${++packages}`, minSdk: 24, targetSdk: 36 }), sign: 'release', schemes: { v1: true, v2: true, v3: true } });
const packageOf = (scan: any): string => scan.target.name;

/** Uploads a package (with the release key unless told), runs its static scan here and now, and returns that scan as REST shows it. */
async function staticScanOf(file: string, credential = key): Promise<any> {
  h.clock.advance(1_000); // each build after the previous one
  const build = await uploadPackage(h, credential, file, 'android');
  expect(await h.jobs.runDue()).toBe(true);
  const read = await readJson(await h.api(`/v1/builds/${build.id}`, { headers: bearer(key) }));
  expect(read.release).toBe(credential === key);
  const summary = read.scans.find((s: any) => s.engine === 'static');
  const { status, body } = await getScan(h, key, summary.id);
  expect(status).toBe(200);
  return body;
}

const ids = (scan: any): string[] => scan.findings.map((f: any) => f.id);
const finding = (scan: any, id: string) => scan.findings.find((f: any) => f.id === id);

async function listSigners(credential: string, app = appId, pkg?: string): Promise<{ status: number; body: any }> {
  const res = await h.api(`/v1/apps/${app}/signers${pkg ? `?package=${encodeURIComponent(pkg)}` : ''}`, { headers: bearer(credential) });
  return { status: res.status, body: await readJson(res) };
}

async function recordSigner(credential: string, body: unknown, app = appId): Promise<{ status: number; body: any }> {
  const res = await h.api(`/v1/apps/${app}/signers`, { method: 'POST', headers: json(credential), body: JSON.stringify(body) });
  return { status: res.status, body: await readJson(res) };
}

function gql(token: string, query: string, variables?: Record<string, unknown>) {
  return h.api('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(token) }, body: JSON.stringify({ query, variables }) });
}

describe('the signer named on a static scan', () => {
  it('carries the certificates apksigner prints, in REST and GraphQL; a preview carries null', async () => {
    const apk = await releaseApk();
    const scan = await staticScanOf(apk);
    const [sha256] = await printedSigners(apk);
    expect(scan.signing).toEqual({
      verified: true,
      schemes: await printedSchemes(apk),
      signers: [{ sha256, subject: expect.stringContaining('CN=Example Release'), notAfter: expect.any(String), keyAlgorithm: 'RSA', keyBits: 3072 }],
      lineage: [],
    });
    const preview = await registerBuild(h, key, { platform: 'android', version: '1.0.0', commit: null });
    expect((await getScan(h, key, preview.scans[0].id)).body.signing).toBeNull();

    const res = await gql(admin, `query($id: ID!) { scan(id: $id) { signing { __typename ... on AndroidSigning { verified schemes lineage signers { sha256 keyBits } } } } }`, { id: scan.id });
    const { data } = await readJson(res);
    expect(data.scan.signing).toEqual({ __typename: 'AndroidSigning', verified: true, schemes: scan.signing.schemes, lineage: [], signers: [{ sha256, keyBits: 3072 }] });
  });
});

describe('signing continuity', () => {
  it('records the first verified signer of a package, listed in REST and on App.signers', async () => {
    const apk = await releaseApk();
    const scan = await staticScanOf(apk);
    const [sha256] = await printedSigners(apk);
    expect(ids(scan)).not.toContain('android.signer-changed');
    const { status, body } = await listSigners(readOnly, appId, packageOf(scan));
    expect(status).toBe(200);
    expect(body.data).toEqual([
      { platform: 'android', package: packageOf(scan), sha256, teamId: null, source: 'scan', scanId: scan.id, reason: null, recordedAt: scan.createdAt },
    ]);
    const res = await gql(admin, `query($id: ID!, $p: String) { app(id: $id) { signers(package: $p) { platform package sha256 teamId source scanId reason } } }`, { id: appId, p: packageOf(scan) });
    expect((await readJson(res)).data.app.signers).toEqual([{ platform: 'android', package: packageOf(scan), sha256, teamId: null, source: 'scan', scanId: scan.id, reason: null }]);
  });

  it('gives a package re-signed by a stranger critical android.signer-changed and a lower grade, and keeps the record', async () => {
    const apk = await releaseApk();
    const first = await staticScanOf(apk);
    const strangerApk = await resignApk(apk, await otherKeystore('stranger'));
    const stranger = await staticScanOf(strangerApk);
    const [recorded] = await printedSigners(apk);
    const [theirs] = await printedSigners(strangerApk);
    expect(theirs).not.toBe(recorded);
    expect(stranger.signing.signers[0].sha256).toBe(theirs);
    const changed = finding(stranger, 'android.signer-changed');
    expect(changed).toMatchObject({ severity: 'critical' });
    expect(changed.detail).toContain(recorded.slice(0, 16));
    expect(changed.detail).toContain(theirs.slice(0, 16));
    expect(changed.fix).toContain(`POST /v1/apps/${appId}/signers`);
    // Scored with the finding: the same package otherwise, graded lower.
    expect(stranger).toMatchObject(scoreAndGrade(stranger.findings));
    expect(stranger.score).toBeLessThan(first.score);
    expect((await listSigners(key, appId, packageOf(first))).body.data[0]).toMatchObject({ sha256: recorded, scanId: first.id });
  });

  it('accepts a rotation proven by a v3 lineage: low android.signer-rotated, and the record moves', async () => {
    const apk = await releaseApk();
    await staticScanOf(apk);
    const rotated = await rotateApk(apk, await keystore('release'), await otherKeystore('rotated'));
    const [oldSha] = await printedSigners(apk);
    const [newSha] = await printedSigners(rotated);
    expect(await printedLineage(rotated)).toEqual([oldSha, newSha]);
    const scan = await staticScanOf(rotated);
    expect(scan.signing.lineage).toEqual([oldSha, newSha]);
    expect(ids(scan)).not.toContain('android.signer-changed');
    expect(finding(scan, 'android.signer-rotated')).toMatchObject({ severity: 'low' });
    expect((await listSigners(key, appId, packageOf(scan))).body.data[0]).toMatchObject({ sha256: newSha, source: 'scan', scanId: scan.id });
    // The old key alone no longer matches the record.
    expect(ids(await staticScanOf(apk))).toContain('android.signer-changed');
  });

  it('lets an operator record a deliberate re-key (audited), after which the new signer passes', async () => {
    const apk = await releaseApk();
    const first = await staticScanOf(apk);
    const strangerApk = await resignApk(apk, await otherKeystore('stranger'));
    const [theirs] = await printedSigners(strangerApk);
    const reason = 'New upload key after a key upgrade (ticket OPS-142)';
    const created = await recordSigner(key, { package: packageOf(first), sha256: theirs.toUpperCase(), reason });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ platform: 'android', package: packageOf(first), sha256: theirs, teamId: null, source: 'operator', scanId: null, reason, recordedAt: h.clock.now().toISOString() });
    expect((await listSigners(key, appId, packageOf(first))).body.data).toEqual([created.body]);

    const audit = await readJson(await h.api(`/v1/apps/${appId}/audit-events?action=signer.recorded`, { headers: bearer(key) }));
    expect(audit.data[0]).toMatchObject({ action: 'signer.recorded', subject: `android:${packageOf(first)}`, reason });
    // The entry keeps both signers: the one recorded and the one it replaced.
    const entry = await h.deps.db.collection('audit_events').findOne({ _id: audit.data[0].id } as never);
    expect(entry!.details).toMatchObject({ platform: 'android', package: packageOf(first), sha256: theirs, previousSha256: first.signing.signers[0].sha256 });
    expect(entry!.actor).toMatch(/^api_key:/);

    expect(ids(await staticScanOf(strangerApk))).not.toContain('android.signer-changed');
  });

  it('never records an unverified signature', async () => {
    const apk = await buildApk({ manifest: androidManifest({ packageName: `com.example.unsigned${++packages}`, minSdk: 24 }), sign: 'none' });
    const scan = await staticScanOf(apk);
    expect(scan.signing === null || scan.signing.verified === false).toBe(true);
    expect((await listSigners(key, appId, packageOf(scan))).body.data).toEqual([]);
    expect(scan.signerContinuity).toEqual({ verdict: 'unverified', releaseBuild: true });
  });
});

describe('release builds and signing continuity', () => {
  it('a branch build records no signer (no verdict, stated in the scan); the release build after it records its own', async () => {
    const apk = await releaseApk();
    const strangerApk = await resignApk(apk, await otherKeystore('stranger'));
    // A branch job signed with another key comes first: it must not become the package's reference.
    const branch = await staticScanOf(strangerApk, branchKey);
    expect(branch.signerContinuity).toEqual({ verdict: 'unrecorded', releaseBuild: false });
    expect(ids(branch)).not.toContain('android.signer-changed');
    expect((await listSigners(key, appId, packageOf(branch))).body.data).toEqual([]);

    const release = await staticScanOf(apk);
    expect(release.signerContinuity).toEqual({ verdict: 'recorded', releaseBuild: true });
    expect(ids(release)).not.toContain('android.signer-changed');
    const [sha256] = await printedSigners(apk);
    expect((await listSigners(key, appId, packageOf(release))).body.data).toEqual([expect.objectContaining({ sha256, scanId: release.id })]);
  });

  it('a branch build signed otherwise than the release record gets android.signer-changed; the record stays', async () => {
    const apk = await releaseApk();
    const release = await staticScanOf(apk);
    const sameKey = await staticScanOf(apk, branchKey);
    expect(sameKey.signerContinuity).toEqual({ verdict: 'unchanged', releaseBuild: false });
    expect(ids(sameKey)).not.toContain('android.signer-changed');

    const stranger = await staticScanOf(await resignApk(apk, await otherKeystore('stranger')), branchKey);
    expect(stranger.signerContinuity).toEqual({ verdict: 'changed', releaseBuild: false });
    expect(finding(stranger, 'android.signer-changed')).toMatchObject({ severity: 'critical' });
    expect(finding(stranger, 'android.signer-changed').detail).toContain(`recorded from scan ${release.id}`);
    expect((await listSigners(key, appId, packageOf(release))).body.data).toEqual([expect.objectContaining({ scanId: release.id, sha256: release.signing.signers[0].sha256 })]);
  });

  it('a branch build never moves the record, even on a proven rotation (no finding), while a release build does', async () => {
    const apk = await releaseApk();
    const release = await staticScanOf(apk);
    const rotated = await rotateApk(apk, await keystore('release'), await otherKeystore('rotated'));
    const branch = await staticScanOf(rotated, branchKey);
    expect(branch.signerContinuity).toEqual({ verdict: 'rotated', releaseBuild: false });
    expect(ids(branch)).not.toContain('android.signer-changed');
    expect(ids(branch)).not.toContain('android.signer-rotated');
    expect((await listSigners(key, appId, packageOf(release))).body.data[0]).toMatchObject({ scanId: release.id });
    const moved = await staticScanOf(rotated);
    expect(moved.signerContinuity).toEqual({ verdict: 'rotated', releaseBuild: true });
    expect((await listSigners(key, appId, packageOf(release))).body.data[0]).toMatchObject({ scanId: moved.id });
  });

  it('compares a branch check with the record through the service, and never writes one', async () => {
    const pkg = `com.example.branch${++packages}`;
    const signing: AndroidSigning = { verified: true, schemes: ['v2'], signers: [{ sha256: '1'.repeat(64), subject: 'CN=x', notAfter: '2050-01-01T00:00:00.000Z', keyAlgorithm: 'RSA', keyBits: 3072 }], lineage: [] };
    const ctx = operatorContext(h.deps, null);
    expect(await checkSigningContinuity(ctx, { appId, platform: 'android', package: pkg, scanId: 'scn_branch1xx', signing, release: false })).toEqual({ findings: [], verdict: 'unrecorded' });
    expect(await h.deps.repos.signers.find({ appId, platform: 'android', package: pkg })).toBeNull();
  });
});

describe('concurrent first scans of one package', () => {
  it('on two instances sharing the database record exactly one signer; the other scan is compared with it', async () => {
    const mongo = new MongoClient(process.env.TEST_MONGODB_URI!);
    await mongo.connect();
    const second: Deps = await createDeps(h.config, { clock: h.clock, mongo, logger: createLogger('silent') });
    try {
      for (let round = 0; round < 3; round++) {
        const apk = await releaseApk();
        const strangerApk = await resignApk(apk, await otherKeystore('stranger'));
        const a = await uploadPackage(h, key, apk, 'android');
        const b = await uploadPackage(h, key, strangerApk, 'android');
        const jobs = [
          (await h.deps.repos.scanJobs.claim(h.clock.now(), DEFAULT_RUNNER_OPTIONS.leaseMs))!,
          (await second.repos.scanJobs.claim(h.clock.now(), DEFAULT_RUNNER_OPTIONS.leaseMs))!,
        ];
        expect(new Set(jobs.map((j) => j.buildId))).toEqual(new Set([a.id, b.id]));
        const outcomes = await Promise.all([runScanJob(h.deps, jobs[0]), runScanJob(second, jobs[1])]);
        // The later build's job may wait for the earlier one's scan (its baseline): done as a runner marks it, the
        // earlier lets the later run again, with the analysis it kept.
        for (const [i, outcome] of outcomes.entries()) if (outcome !== 'deferred') await h.deps.repos.scanJobs.complete(jobs[i]._id, jobs[i].attempts, h.clock.now());
        if (outcomes.includes('deferred')) {
          h.clock.advance(DEFER_MS);
          const again = (await second.repos.scanJobs.claim(h.clock.now(), DEFAULT_RUNNER_OPTIONS.leaseMs))!;
          expect(await runScanJob(second, again)).toBeUndefined();
          await second.repos.scanJobs.complete(again._id, again.attempts, h.clock.now());
        }
        const scans = await Promise.all([a.id, b.id].map(async (id) => (await h.deps.repos.scans.listForBuild(appId, id)).find((s) => s.engine === 'static')!));
        const pkg = scans[0].target.name;
        const records = (await listSigners(key, appId, pkg)).body.data;
        expect(records).toHaveLength(1);
        const winner = scans.find((s) => s._id === records[0].scanId)!;
        const loser = scans.find((s) => s !== winner)!;
        expect(records[0].sha256).toBe((winner.signing as AndroidSigning).signers[0].sha256);
        expect(winner.findings.map((f) => f.id)).not.toContain('android.signer-changed');
        expect(loser.findings.map((f) => f.id)).toContain('android.signer-changed');
      }
    } finally {
      await closeDeps(second, { closeMongo: false });
      await mongo.close();
    }
  });

  it('records one signer however many checks race, each loser comparing with the winner (the service alone)', async () => {
    const shas = Array.from({ length: 8 }, (_, i) => String(i).repeat(64));
    const android = (sha256: string, lineage: string[] = []): AndroidSigning => ({
      verified: true, schemes: ['v2', 'v3'], signers: [{ sha256, subject: 'CN=x', notAfter: '2050-01-01T00:00:00.000Z', keyAlgorithm: 'RSA', keyBits: 3072 }], lineage,
    });
    const pkg = `com.example.race${++packages}`;
    const results = await Promise.all(
      shas.map((sha, i) => checkSigningContinuity(operatorContext(h.deps, null), { appId, platform: 'android', package: pkg, scanId: `scn_race${i}xx`, signing: android(sha), release: true })),
    );
    const [record] = (await listSigners(key, appId, pkg)).body.data;
    const winner = shas.indexOf(record.sha256);
    expect(winner).toBeGreaterThanOrEqual(0);
    results.forEach((found, i) => expect(found.findings.map((f) => f.id)).toEqual(i === winner ? [] : ['android.signer-changed']));
    results.forEach((found, i) => expect(found.verdict).toBe(i === winner ? 'recorded' : 'changed'));

    // Two rotations from the recorded signer race: one moves the record, the other is compared with the moved one.
    const [to1, to2] = ['a'.repeat(64), 'b'.repeat(64)];
    const moves = await Promise.all([to1, to2].map((to, i) => checkSigningContinuity(operatorContext(h.deps, null), { appId, platform: 'android', package: pkg, scanId: `scn_move${i}xx`, signing: android(to, [record.sha256, to]), release: true })));
    const moved = (await listSigners(key, appId, pkg)).body.data[0];
    expect([to1, to2]).toContain(moved.sha256);
    expect(moves.map((m) => m.findings.map((f) => f.id)).sort()).toEqual([['android.signer-changed'], ['android.signer-rotated']]);
  });
});

describe('iOS team continuity (the service, with seals as the analyser reports them)', () => {
  // As the analyser reports a seal whose signer chains to Apple: the team, and the leaf's key (one key per leaf here).
  const seal = (teamId: string | null, leaf: string, verified = true, keySha256: string | null = `k${leaf.slice(1)}`): IosSigning =>
    ({ verified, teamId, keySha256, signers: [{ sha256: leaf, subject: `OU=${teamId}`, notAfter: '2050-01-01T00:00:00.000Z' }] });
  const continuity = async (pkg: string, signing: IosSigning, release = true, scanId = `scn_ios${Math.random().toString(36).slice(2, 10)}`) =>
    checkSigningContinuity(operatorContext(h.deps, null), { appId, platform: 'ios', package: pkg, scanId, signing, release });
  const check = async (pkg: string, signing: IosSigning, scanId?: string) => (await continuity(pkg, signing, true, scanId)).findings;

  it('records the team; a new leaf of that team passes, another team is critical ios.team-changed; unverified never records', async () => {
    const pkg = `com.example.ios${++packages}`;
    expect(await check(pkg, seal('ABCDE12345', 'c'.repeat(64), false))).toEqual([]);
    expect((await listSigners(key, appId, pkg)).body.data).toEqual([]);
    expect(await check(pkg, seal('ABCDE12345', 'c'.repeat(64)))).toEqual([]);
    expect((await listSigners(key, appId, pkg)).body.data[0]).toMatchObject({ platform: 'ios', teamId: 'ABCDE12345', sha256: 'c'.repeat(64), source: 'scan' });
    // A new leaf of that team with the same key (a certificate re-issued for the key) is no change at all.
    expect(await check(pkg, seal('ABCDE12345', 'd'.repeat(64), true, `k${'c'.repeat(63)}`))).toEqual([]);
    const [changed] = await check(pkg, seal('ZZZZZ99999', 'e'.repeat(64)));
    expect(changed).toMatchObject({ id: 'ios.team-changed', severity: 'critical' });
    expect(changed.detail).toContain('ABCDE12345');
    expect(changed.detail).toContain('ZZZZZ99999');
    // An operator's re-key to the new team makes it pass.
    const created = await recordSigner(key, { package: pkg, teamId: 'ZZZZZ99999', reason: 'moved to the new company account' });
    expect(created.body).toMatchObject({ platform: 'ios', teamId: 'ZZZZZ99999', sha256: null, source: 'operator' });
    expect(await check(pkg, seal('ZZZZZ99999', 'e'.repeat(64)))).toEqual([]);
  });

  it('pins the leaf\'s key: a new key of the team is low ios.signing-key-renewed, said once when a release build pins it', async () => {
    const pkg = `com.example.ios${++packages}`;
    await check(pkg, seal('ABCDE12345', 'c'.repeat(64)));
    expect((await listSigners(key, appId, pkg)).body.data[0]).toMatchObject({ teamId: 'ABCDE12345', sha256: 'c'.repeat(64) });
    // A branch build with the new key is told, and pins nothing.
    const branch = await continuity(pkg, seal('ABCDE12345', 'd'.repeat(64)), false);
    expect(branch.verdict).toBe('unchanged');
    expect(branch.findings).toMatchObject([{ id: 'ios.signing-key-renewed', severity: 'low' }]);
    expect((await listSigners(key, appId, pkg)).body.data[0].sha256).toBe('c'.repeat(64));
    // A release build with it is told, pins it (a retry of its job reports the same), and the next build passes.
    const release = await continuity(pkg, seal('ABCDE12345', 'd'.repeat(64)), true, 'scn_iosrenew01');
    expect(release.verdict).toBe('unchanged');
    expect(release.findings).toMatchObject([{ id: 'ios.signing-key-renewed', severity: 'low' }]);
    expect(release.findings[0].detail).toContain('ABCDE12345');
    expect(await continuity(pkg, seal('ABCDE12345', 'd'.repeat(64)), true, 'scn_iosrenew01')).toEqual(release);
    expect((await listSigners(key, appId, pkg)).body.data[0]).toMatchObject({ teamId: 'ABCDE12345', sha256: 'd'.repeat(64), scanId: 'scn_iosrenew01' });
    expect(await check(pkg, seal('ABCDE12345', 'd'.repeat(64)))).toEqual([]);
    // Back to the old key is a renewal again, never a team change.
    expect((await check(pkg, seal('ABCDE12345', 'c'.repeat(64)))).map((f) => f.id)).toEqual(['ios.signing-key-renewed']);
  });

  it('never takes a team the analyser did not prove through Apple\'s chain for the recorded team', async () => {
    const pkg = `com.example.ios${++packages}`;
    await check(pkg, seal('ABCDE12345', 'c'.repeat(64)));
    // The team's id without the chain's key (what a copied OU in a certificate of one's own amounts to) is another signer.
    const claimed = await continuity(pkg, seal('ABCDE12345', 'e'.repeat(64), true, null));
    expect(claimed.verdict).toBe('changed');
    expect(claimed.findings).toMatchObject([{ id: 'ios.team-changed', severity: 'critical' }]);
    // And the analyser's verdict on such a seal, unverified, records and compares nothing.
    expect(await continuity(pkg, { verified: false, teamId: null, keySha256: null, signers: [{ sha256: 'e'.repeat(64), subject: 'OU=ABCDE12345', notAfter: '2050-01-01T00:00:00.000Z' }] }))
      .toEqual({ findings: [], verdict: 'unverified' });
    expect((await listSigners(key, appId, pkg)).body.data[0]).toMatchObject({ teamId: 'ABCDE12345', sha256: 'c'.repeat(64) });
  });
});

describe('GET and POST /v1/apps/{id}/signers', () => {
  const sha = 'f'.repeat(64);
  it('answers another app\'s id 404, like an unknown one', async () => {
    expect((await listSigners(otherKey)).status).toBe(404);
    expect((await recordSigner(otherKey, { package: 'com.example.x', sha256: sha, reason: 'r' })).status).toBe(404);
    expect((await listSigners(key, 'app_doesnotexist00000000')).status).toBe(404);
  });
  it('needs builds:read to list and rules:write to record', async () => {
    expect((await listSigners(scansOnly)).status).toBe(403);
    expect((await recordSigner(readOnly, { package: 'com.example.x', sha256: sha, reason: 'r' })).status).toBe(403);
    expect((await listSigners(readOnly)).status).toBe(200);
  });
  it('refuses a body that names no signer, or the wrong one for the platform, as a 422 naming the fields', async () => {
    const cases: Array<[unknown, string]> = [
      [{ package: 'com.example.x', reason: 'r' }, '/sha256'],
      [{ package: 'com.example.x', platform: 'ios', sha256: sha, reason: 'r' }, '/teamId'],
      [{ package: 'com.example.x', platform: 'android', teamId: 'ABCDE12345', reason: 'r' }, '/teamId'],
      [{ package: 'com.example.x', sha256: 'abc', reason: 'r' }, '/sha256'],
      [{ package: 'com.example.x', sha256: sha, reason: '' }, '/reason'],
      [{ package: 'com.example.x', sha256: sha, reason: 'r', extra: 1 }, ''],
    ];
    for (const [body, pointer] of cases) {
      const res = await recordSigner(key, body);
      expect(res.status).toBe(422);
      expect(res.body.type).toBeDefined();
      if (pointer) expect(res.body.errors.map((e: any) => e.pointer)).toContain(pointer);
    }
    expect((await listSigners(key, appId, 'com.example.x')).body.data).toEqual([]);
  });
  it('records through GraphQL too (admin staff), the same record and audit', async () => {
    const res = await gql(admin, `mutation($id: ID!, $input: RecordSignerInput!) { recordSigner(appId: $id, input: $input) { platform package sha256 source reason } }`, {
      id: appId, input: { package: 'com.example.graphql', sha256: sha, reason: 'staff re-key' },
    });
    expect((await readJson(res)).data.recordSigner).toEqual({ platform: 'android', package: 'com.example.graphql', sha256: sha, source: 'operator', reason: 'staff re-key' });
    expect((await listSigners(key, appId, 'com.example.graphql')).body.data).toHaveLength(1);
  });
});
