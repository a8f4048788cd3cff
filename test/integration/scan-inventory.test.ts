// Protects: the inventory of a static scan and its SBOM (docs/scan-evidence.md). A static scan carries `inventory`
// (native libraries with ABI and SHA-256, requested permissions, recognised SDKs) in REST and GraphQL; a preview
// carries null. GET /v1/scans/{id}/sbom answers the inventory as a CycloneDX 1.6 document that the CycloneDX
// project's own JSON schema validator accepts, with the libraries' hashes as sha256sum computes them; a preview's
// SBOM is 404, another app's scan 404, a key without scans:read 403. The libraries and their digests are what unzip
// and sha256sum give; an SDK's evidence is a class baksmali lists in the DEX.
import { Spec, Validation } from '@cyclonedx/cyclonedx-library';
import { startHarness, bearer, readJson, type Harness } from '../support/harness';
import { androidManifest, buildApk, cleanupFixtures } from '../fixtures/build-packages';
import { execFileSync } from 'node:child_process';
import { getScan, registerBuild, uploadPackage } from './scans-support';
import { nativeCorpus } from '../fixtures/native-corpus';
import { buildSecretApk, cleanupSecretPackages } from '../fixtures/secret-packages';
import { runSync } from '../support/host-tools';

let h: Harness;
let appId: string;
let key: string;
let otherKey: string;
let buildsOnly: string;
let admin: string;

beforeAll(async () => {
  h = await startHarness({ jobs: false });
  appId = (await h.newApp('scale')).appId;
  key = (await h.newKey(appId, ['builds:write', 'builds:read', 'scans:read'])).key;
  buildsOnly = (await h.newKey(appId, ['builds:read'])).key;
  otherKey = (await h.newKey((await h.newApp('scale')).appId, ['builds:write', 'builds:read', 'scans:read'])).key;
  admin = await h.newStaff('admin');
});
afterAll(async () => {
  await h.close();
  await cleanupFixtures();
  await cleanupSecretPackages();
});

const PERMISSIONS = ['android.permission.CAMERA', 'android.permission.INTERNET', 'android.permission.SYSTEM_ALERT_WINDOW'];

async function staticScanOf(file: string): Promise<any> {
  const build = await uploadPackage(h, key, file, 'android');
  expect(await h.jobs.runDue()).toBe(true);
  const read = await readJson(await h.api(`/v1/builds/${build.id}`, { headers: bearer(key) }));
  const { status, body } = await getScan(h, key, read.scans.find((s: any) => s.engine === 'static').id);
  expect(status).toBe(200);
  return body;
}

async function sbomOf(scanId: string, credential = key): Promise<{ status: number; type: string | null; body: any }> {
  const res = await h.api(`/v1/scans/${scanId}/sbom`, { headers: bearer(credential) });
  return { status: res.status, type: res.headers.get('content-type'), body: await readJson(res) };
}

describe('the inventory of a static scan', () => {
  let scan: any;
  beforeAll(async () => {
    const manifestExtra = PERMISSIONS.map((p) => `<uses-permission android:name="${p}"/>`).join('');
    scan = await staticScanOf(await buildApk({ manifest: androidManifest({ packageName: 'com.example.inventory', minSdk: 26, targetSdk: 36, manifestExtra }), sign: 'release' }));
  });

  it('lists the requested permissions in REST and GraphQL; a preview has none', async () => {
    expect(scan.inventory).toEqual({ nativeLibraries: expect.any(Array), permissions: PERMISSIONS, sdks: expect.any(Array) });
    const res = await h.api('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(admin) }, body: JSON.stringify({ query: 'query($id: ID!) { scan(id: $id) { inventory { permissions nativeLibraries { path abi sha256 } sdks { name evidence } } } }', variables: { id: scan.id } }) });
    expect((await readJson(res)).data.scan.inventory).toEqual(scan.inventory);
    const preview = await registerBuild(h, key, { platform: 'android', version: '1.0.0', commit: null });
    expect((await getScan(h, key, preview.scans[0].id)).body.inventory).toBeNull();
    expect((await sbomOf(preview.scans[0].id)).status).toBe(404);
  });

  it('answers the SBOM as CycloneDX 1.6 JSON that the CycloneDX schema accepts', async () => {
    const sbom = await sbomOf(scan.id);
    expect(sbom.status).toBe(200);
    expect(sbom.type).toMatch(/^application\/vnd\.cyclonedx\+json/);
    const errors = await new Validation.JsonStrictValidator(Spec.Version.v1dot6).validate(JSON.stringify(sbom.body));
    expect(errors).toBeNull();
    expect(sbom.body.metadata.component).toMatchObject({ type: 'application', name: 'com.example.inventory', version: '1.2.3' });
    const permissions = sbom.body.metadata.component.properties.filter((p: any) => p.name === 'shieldgate:android:permission').map((p: any) => p.value);
    expect(permissions).toEqual(PERMISSIONS);
    expect((await sbomOf(scan.id)).body.serialNumber).toBe(sbom.body.serialNumber);
  });

  it('keeps the SBOM to the scan\'s app and scope', async () => {
    expect((await sbomOf(scan.id, otherKey)).status).toBe(404);
    expect((await sbomOf(scan.id, buildsOnly)).status).toBe(403);
  });
});

describe('native libraries and SDKs in the inventory', () => {
  it('lists every lib/<abi>/*.so with the digest sha256sum gives it, and the SBOM names each as a file with that hash', async () => {
    const apk = (await nativeCorpus()).apks.find((a) => a.name === 'stored-4k')!;
    const scan = await staticScanOf(apk.file);
    // The expected list from the tools: unzip lists the entries, sha256sum hashes each as unzip extracts it.
    const entries = runSync('unzip', ['-Z1', apk.file], { encoding: 'utf8' }).split('\n').filter((n) => /^lib\/[^/]+\/[^/]+\.so$/.test(n));
    const expected = entries.map((path) => ({
      path,
      abi: path.split('/')[1],
      sha256: execFileSync('sh', ['-c', 'unzip -p "$0" "$1" | sha256sum', apk.file, path], { encoding: 'utf8' }).split(' ')[0],
    }));
    expect(entries.length).toBeGreaterThan(3);
    expect([...scan.inventory.nativeLibraries].sort((a: any, b: any) => a.path.localeCompare(b.path))).toEqual(expected.sort((a, b) => a.path.localeCompare(b.path)));
    const sbom = await sbomOf(scan.id);
    expect(await new Validation.JsonStrictValidator(Spec.Version.v1dot6).validate(JSON.stringify(sbom.body))).toBeNull();
    const files = sbom.body.components.filter((c: any) => c.type === 'file');
    expect(files.map((f: any) => [f.name, f.hashes[0].content]).sort()).toEqual(expected.map((e) => [e.path, e.sha256]).sort());
  });

  it('recognises an SDK by the package of its DEX classes, with that evidence in REST and the SBOM', async () => {
    const apk = await buildSecretApk({ dex: [['hello']] });
    // baksmali says which classes the DEX holds: the SDK's class among them.
    const classes = execFileSync('sh', ['-c', 'unzip -p "$0" classes.dex > "$0.dex" && baksmali list classes "$0.dex"', apk], { encoding: 'utf8' });
    expect(classes).toContain('Lcom/google/firebase/analytics/FirebaseAnalytics;');
    const scan = await staticScanOf(apk);
    expect(scan.inventory.sdks).toContainEqual({ name: 'Firebase', evidence: 'DEX classes in package com.google.firebase' });
    const sbom = await sbomOf(scan.id);
    const firebase = sbom.body.components.find((c: any) => c.type === 'library' && c.name === 'Firebase');
    expect(firebase.evidence.identity[0].methods[0].value).toBe('DEX classes in package com.google.firebase');
  });
});
