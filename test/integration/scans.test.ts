// Protects: scans as clients see them. A registered build gets a preview scan at once (findings from its declared
// metadata and the kind of credential, score and grade from the documented penalties), listed oldest first on the
// Build and readable at GET /v1/scans/{id}; an uploaded APK or IPA gets a static scan from the package itself, made
// off the request path, which records the APK's version code for the lookup of the build a device attests (newest
// scan of the app, package and code; never a package not read, never in the API's target); a package that cannot
// be read still gets a scan (package.unreadable) and leaves no job behind; another app's scan is 404, a key without
// scans:read is 403; staff read any scan over /graphql.
import { randomBytes } from 'node:crypto';
import { startHarness, bearer, json, type Harness } from '../support/harness';
import { androidManifest, buildAab, buildApk, buildIpa, cleanupFixtures, writeRawFile } from '../fixtures/build-packages';
import { analyzePackage } from '../../src/scan/static/analyze-package';
import { previewFindings, scoreAndGrade } from '../../src/scan';
import { FULL_SHA, getBuild, getScan, registerBuild, uploadPackage, waitForStaticScan } from './scans-support';

/** A REST finding without what the comparison adds (fingerprint, status, suppressed): the analyser's own fields. */
const apiPart = ({ fingerprint: _f, status: _s, suppressed: _u, ...f }: any) => f;

let h: Harness;
let appId: string;
let key: string; // live key with every scope the tests need
let testKey: string;
let otherKey: string; // another app
let otherAppId: string;
let noScanScope: string;

beforeAll(async () => {
  h = await startHarness();
  appId = (await h.newApp('scale')).appId;
  key = (await h.newKey(appId, ['builds:write', 'builds:read', 'scans:read'])).key;
  testKey = (await h.newKey(appId, ['builds:write', 'builds:read', 'scans:read'], 'test')).key;
  noScanScope = (await h.newKey(appId, ['builds:write', 'builds:read'])).key;
  const other = await h.newApp('scale');
  otherAppId = other.appId;
  otherKey = (await h.newKey(other.appId, ['builds:write', 'builds:read', 'scans:read'])).key;
});
afterAll(async () => {
  await h.close();
  await cleanupFixtures();
});

const ids = (scan: { findings: Array<{ id: string }> }) => scan.findings.map((f) => f.id).sort();

describe('preview scan', () => {
  it('is made when a build is registered, from the declared metadata, and shown on the Build', async () => {
    const build = await registerBuild(h, key, { platform: 'android', version: '2.0.0-SNAPSHOT', commit: null });
    expect(build.scans).toHaveLength(1);
    expect(build.scans[0]).toEqual({ id: expect.stringMatching(/^scn_/), engine: 'preview', grade: expect.any(String), score: expect.any(Number) });

    const { status, body: scan } = await getScan(h, key, build.scans[0].id);
    expect(status).toBe(200);
    const expected = previewFindings({ platform: 'android', version: '2.0.0-SNAPSHOT', commit: null, artifact: null, keyMode: 'live' });
    expect(scan).toEqual({
      id: build.scans[0].id,
      appId,
      engine: 'preview',
      ...scoreAndGrade(expected),
      target: { platform: 'android', name: 'test app', version: '2.0.0-SNAPSHOT' },
      // The app's first build: no baseline, every finding new (fingerprints: test/integration/baselines.test.ts).
      findings: expected.map((f) => ({ ...f, fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/), status: 'new', suppressed: null })),
      baseline: null,
      diff: { new: expected.length, existing: 0, fixed: 0 },
      fixedFindings: [],
      unsuppressed: [],
      signing: null, // a preview reads no package
      signerContinuity: null,
      inventory: null,
      createdAt: h.clock.now().toISOString(),
    });
    // The metadata's problems, each with a fix: no commit, a snapshot version from a live key, no artifact.
    expect(ids(scan)).toEqual(['preview.artifact-undeclared', 'preview.commit-missing', 'preview.long-lived-key', 'preview.version-debug']);
    expect(scan.findings.find((f: any) => f.id === 'preview.version-debug').severity).toBe('high');
    expect(scan.score).toBe(100 - 8 - 20 - 8 - 3);
    expect(scan.grade).toBe('C-');
    for (const f of scan.findings) expect(f.fix.length).toBeGreaterThan(20);

    const read = await getBuild(h, key, build.id);
    expect(read.scans).toEqual(build.scans);
  });

  it('tells a test key from a live key, and scores a clean registration high', async () => {
    const artifact = { sizeBytes: 10, sha256: 'a'.repeat(64) };
    const viaTest = await registerBuild(h, testKey, { platform: 'ios', version: '3.1.0', commit: FULL_SHA, artifact });
    const testScan = (await getScan(h, testKey, viaTest.scans[0].id)).body;
    expect(ids(testScan)).toEqual(['preview.test-key']);
    expect(testScan.target).toEqual({ platform: 'ios', name: 'test app', version: '3.1.0' });

    const viaLive = await registerBuild(h, key, { platform: 'ios', version: '3.1.0', commit: FULL_SHA, artifact });
    const liveScan = (await getScan(h, key, viaLive.scans[0].id)).body;
    expect(ids(liveScan)).toEqual(['preview.long-lived-key']);
    expect(liveScan).toMatchObject({ score: 97, grade: 'A' });
  });
});

/** The build's scan job state once it is no longer queued or running (or after 10 s). */
async function jobStateSettled(buildId: string): Promise<string | undefined> {
  for (let i = 0; i < 100; i++) {
    const state = (await h.deps.repos.scanJobs.findByBuild(appId, buildId))?.state;
    if (state !== 'running' && state !== 'queued') return state;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return (await h.deps.repos.scanJobs.findByBuild(appId, buildId))?.state;
}

describe('static scan', () => {
  it('analyses an uploaded APK off the request path and lists it after the preview scan', async () => {
    const file = await buildApk({
      manifest: androidManifest({
        minSdk: 21,
        targetSdk: 34,
        application: { 'android:debuggable': 'true', 'android:allowBackup': 'true' },
        body: '<activity android:name=".Main" android:exported="true"/>',
      }),
      sign: 'debug',
    });
    const uploaded = await uploadPackage(h, key, file, 'android');
    expect(uploaded.scans.map((s: any) => s.engine)).toEqual(['preview']);

    const build = await waitForStaticScan(h, key, uploaded.id);
    expect(build.scans.map((s: any) => s.engine)).toEqual(['preview', 'static']);
    const { status, body: scan } = await getScan(h, key, build.scans[1].id);
    expect(status).toBe(200);
    const direct = await analyzePackage(file, 'android', { now: h.clock.now() });
    expect(scan.findings.map(apiPart)).toEqual(direct.findings.map(({ location: _location, ...f }) => f));
    expect(ids(scan)).toEqual(expect.arrayContaining(['android.debuggable', 'android.allow-backup', 'android.debug-certificate']));
    expect(scan).toMatchObject({ engine: 'static', appId, target: { platform: 'android', name: 'com.example.app', version: '1.2.3' } });
    expect({ score: scan.score, grade: scan.grade }).toEqual(scoreAndGrade(direct.findings));
    expect(build.scans[1]).toEqual({ id: scan.id, engine: 'static', grade: scan.grade, score: scan.score });
    // The job is marked done once its scan is written and the build's grade recorded: a moment after the scan shows.
    expect(await jobStateSettled(build.id)).toBe('done');
  });

  it('analyses an uploaded App Bundle (protobuf manifest)', async () => {
    const file = await buildAab({
      // A package of its own: signed by another key than the APK above, it would meet that signer (signing continuity).
      manifest: androidManifest({ packageName: 'com.example.bundle', minSdk: 26, targetSdk: 36, application: { 'android:usesCleartextTraffic': 'true', 'android:allowBackup': 'false' } }),
      sign: 'release',
    });
    const uploaded = await uploadPackage(h, key, file, 'android');
    const build = await waitForStaticScan(h, key, uploaded.id);
    const scan = (await getScan(h, key, build.scans[1].id)).body;
    expect(scan.findings.map(apiPart)).toEqual((await analyzePackage(file, 'android', { now: h.clock.now() })).findings.map(({ location: _location, ...f }) => f));
    expect(ids(scan)).toContain('android.cleartext-traffic');
    expect(ids(scan)).not.toContain('android.allow-backup');
  });

  it('analyses an uploaded IPA with a binary Info.plist and a development profile', async () => {
    const file = await buildIpa({
      binary: true,
      infoPlist: {
        CFBundleIdentifier: 'com.example.app',
        CFBundleShortVersionString: '4.2.0',
        CFBundleVersion: '420',
        MinimumOSVersion: '16.0',
        NSAppTransportSecurity: { NSAllowsArbitraryLoads: true },
      },
      provision: { devices: ['00008101-000A1B2C3D4E001E'], getTaskAllow: true },
    });
    const uploaded = await uploadPackage(h, key, file, 'ios', '4.2.0');
    const build = await waitForStaticScan(h, key, uploaded.id);
    const scan = (await getScan(h, key, build.scans[1].id)).body;
    expect(ids(scan)).toEqual(expect.arrayContaining(['ios.ats-arbitrary-loads', 'ios.get-task-allow', 'ios.development-profile']));
    expect(scan.target).toMatchObject({ platform: 'ios', version: '4.2.0' });
  });

  it('gives an unreadable package a scan that says so, and leaves no job running', async () => {
    const file = await writeRawFile('app.apk', randomBytes(64 * 1024));
    const uploaded = await uploadPackage(h, key, file, 'android', '5.0.0');
    const build = await waitForStaticScan(h, key, uploaded.id);
    const scan = (await getScan(h, key, build.scans[1].id)).body;
    expect(ids(scan)).toEqual(['package.unreadable']);
    // The target is what the build declared, never a name of the service's own temporary file.
    expect(scan.target).toEqual({ platform: 'android', name: 'test app', version: '5.0.0' });
    // Nor does it record a version code: a device's attested code never finds a package not read.
    expect((await h.deps.repos.scans.findById(appId, scan.id))?.target.versionCode).toBeNull();
    // The job is marked done once its scan is written and the build's grade recorded: a moment after the scan shows.
    expect(await jobStateSettled(build.id)).toBe('done');
  });

  it('records the version code an APK declares, by which the build a device attests is found', async () => {
    // Builds of one package a minute apart, since the newest scan of a code is the one found.
    const upload = async (versionCode: string) => {
      const file = await buildApk({ manifest: androidManifest({ packageName: 'com.example.coded', versionCode }), sign: 'release' });
      const build = await waitForStaticScan(h, key, (await uploadPackage(h, key, file, 'android')).id);
      h.clock.advance(60_000);
      return { id: build.id, scan: (await getScan(h, key, build.scans[1].id)).body };
    };
    const first = await upload('41');
    const second = await upload('0x2a');
    const find = (code: number, pkg = 'com.example.coded', app = appId) => h.deps.repos.scans.latestStaticForVersionCode(app, pkg, code);
    for (const [code, build] of [[41, first], [42, second]] as const) {
      expect(await find(code)).toEqual({ buildId: build.id, grade: build.scan.grade, version: '1.2.3' });
    }
    // A code, a package or an app that has no such build.
    expect(await find(43)).toBeNull();
    expect(await find(41, 'com.example.app')).toBeNull();
    expect(await find(41, 'com.example.coded', otherAppId)).toBeNull();
    // The code is the service's own: the API's target stays platform, name and version.
    expect(second.scan.target).toEqual({ platform: 'android', name: 'com.example.coded', version: '1.2.3' });
    expect((await h.deps.repos.scans.findById(appId, second.scan.id))?.target.versionCode).toBe(42);
    // The same code uploaded again: the newest build is the one found.
    const third = await upload('41');
    expect((await find(41))?.buildId).toBe(third.id);
    expect((await find(42))?.buildId).toBe(second.id);
  });

  it('reports a package of the other platform instead of analysing it', async () => {
    const file = await buildIpa({ binary: false, infoPlist: { CFBundleIdentifier: 'com.example.app', CFBundleShortVersionString: '1.0' } });
    const uploaded = await uploadPackage(h, key, file, 'android');
    const build = await waitForStaticScan(h, key, uploaded.id);
    expect(ids((await getScan(h, key, build.scans[1].id)).body)).toEqual(['package.wrong-platform']);
  });
});

describe('access', () => {
  it('answers 404 for another app\'s scan and for an unknown id, 403 without scans:read', async () => {
    const build = await registerBuild(h, key, { platform: 'android', version: '1.0.0', commit: FULL_SHA });
    const scanId = build.scans[0].id;
    const foreign = await getScan(h, otherKey, scanId);
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('not_found');
    expect(JSON.stringify(foreign.body)).not.toContain(appId);
    expect((await getScan(h, key, 'scn_doesnotexist000')).status).toBe(404);
    const denied = await getScan(h, noScanScope, scanId);
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('insufficient_scope');
    expect((await h.api(`/v1/scans/${scanId}`)).status).toBe(401);
  });

  it('lets staff (support, read-only) read any app\'s scan over /graphql', async () => {
    const build = await registerBuild(h, key, { platform: 'android', version: '1.0.0', commit: FULL_SHA });
    const scanId = build.scans[0].id;
    const query = 'query($id: ID!) { scan(id: $id) { id appId buildId engine score grade target { platform name version } findings { id severity } } }';
    const gql = (token: string) =>
      h.api('/graphql', { method: 'POST', headers: json(token), body: JSON.stringify({ query, variables: { id: scanId } }) }).then((r) => r.json() as Promise<any>);

    const support = await gql(await h.newStaff('support'));
    expect(support.errors).toBeUndefined();
    expect(support.data.scan).toMatchObject({ id: scanId, appId, buildId: build.id, engine: 'preview', target: { name: 'test app' } });
    expect(support.data.scan.findings).toEqual(expect.arrayContaining([{ id: 'preview.long-lived-key', severity: 'low' }]));
    const admin = await gql(await h.newStaff('admin'));
    expect(admin.data.scan.id).toBe(scanId);
  });

  it('answers 404 for an id that is not a scan id', async () => {
    const build = await registerBuild(h, key, { platform: 'android', version: '1.0.0', commit: FULL_SHA });
    const res = await h.api(`/v1/scans/${build.id}`, { headers: bearer(key) });
    expect(res.status).toBe(404);
  });
});
