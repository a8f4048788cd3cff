// Protects: the scan reads the manifest Android installs. Framework attributes are matched by resource id only, the
// manifest's `package` by its name string; a manifest on which two readers could disagree (a decoy android:
// attribute without an id, two attributes of one id, a name whose id is another attribute's, ids out of order, two
// or no `package`) is package.unreadable. Each trick is made from an aapt-built manifest by an edit of its binary
// XML, signed by apksigner; what Android reads is taken from aapt (`dump badging`, `dump xmltree`), never from the
// analyser.
import { mkdtempSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildApk, cleanupFixtures, keystore, STOREPASS } from '../../fixtures/build-packages';
import { moveAttribute, renameString, setAttributeNamespace, setResourceId } from '../../support/axml-edit';
import { run } from '../../support/host-tools';
import { ids, only, scan } from './helpers';

jest.setTimeout(120_000);
const work = mkdtempSync(path.join(os.tmpdir(), 'shieldgate-manifest-reading-'));
afterAll(async () => {
  await cleanupFixtures();
  await rm(work, { recursive: true, force: true });
});

const ANDROID = 'http://schemas.android.com/apk/res/android';
// Same length as ANDROID: aapt compiles attributes in it without resource ids; an edit then renames it to ANDROID.
const DECOY = 'http://schemas.android.com/apk/xes/android';
const DEBUGGABLE = 0x0101000f;

function manifest(opts: { root?: string; app?: string; body?: string } = {}): string {
  return `<?xml version="1.0" encoding="utf-8"?>
<manifest xmlns:android="${ANDROID}" xmlns:d="${DECOY}" package="com.example.victim" android:versionCode="1" android:versionName="1.0"${opts.root ?? ''}>
  <uses-sdk android:minSdkVersion="26" android:targetSdkVersion="35"/>
  <application android:label="Victim" android:allowBackup="false"${opts.app ?? ''}>${opts.body ?? ''}</application>
</manifest>
`;
}

let counter = 0;
/** The APK built by aapt from `source`, its AndroidManifest.xml passed through `edit`, zipaligned and signed by apksigner. */
async function crafted(source: string, edit: (xml: Buffer) => Buffer, networkSecurityConfig?: string): Promise<string> {
  const apk = await buildApk({ manifest: source, sign: 'none', networkSecurityConfig });
  const dir = path.join(work, `apk-${++counter}`);
  await run('mkdir', ['-p', dir]);
  const { stdout } = await run('unzip', ['-p', apk, 'AndroidManifest.xml'], { encoding: 'buffer', maxBuffer: 1 << 20 });
  await writeFile(path.join(dir, 'AndroidManifest.xml'), edit(stdout));
  await run('cp', [apk, path.join(dir, 'unaligned.apk')]);
  await run('zip', ['-q', '-X', path.join(dir, 'unaligned.apk'), 'AndroidManifest.xml'], { cwd: dir });
  await run('zipalign', ['-f', '4', path.join(dir, 'unaligned.apk'), path.join(dir, 'aligned.apk')]);
  const out = path.join(dir, 'app.apk');
  await run('apksigner', ['sign', '--ks', await keystore('release'), '--ks-pass', `pass:${STOREPASS}`, '--key-pass', `pass:${STOREPASS}`, '--out', out, path.join(dir, 'aligned.apk')]);
  await run('apksigner', ['verify', out]);
  return out;
}

/** aapt's tree of the manifest: each attribute line of `element` as "ns:name(0xid)" or "ns:name" or "name". */
async function aaptAttributes(apk: string, element: string): Promise<string[]> {
  const { stdout } = await run('aapt', ['dump', 'xmltree', apk, 'AndroidManifest.xml'], { maxBuffer: 1 << 24 });
  const lines = stdout.split('\n');
  const start = lines.findIndex((l) => new RegExp(`^\\s*E: ${element} `).test(l));
  const indent = lines[start].search(/\S/);
  const out: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.search(/\S/) <= indent + 2 && !/^\s*A: /.test(line)) break;
    const m = /^\s*A: ([^=]+)=/.exec(line);
    if (m && line.search(/\S/) === indent + 2) out.push(m[1]);
  }
  return out;
}

async function badging(apk: string): Promise<string> {
  return (await run('aapt', ['dump', 'badging', apk], { maxBuffer: 1 << 24 })).stdout;
}

describe('the manifest Android installs', () => {
  test('a decoy android:debuggable="false" without a resource id, before the real one, does not hide debuggable', async () => {
    const apk = await crafted(manifest({ app: ' android:debuggable="true" d:debuggablx="false"' }), (xml) =>
      moveAttribute(renameString(renameString(xml, DECOY, ANDROID), 'debuggablx', 'debuggable'), 'application', 'debuggable', 0, 1));
    const attrs = await aaptAttributes(apk, 'application');
    expect(attrs[0]).toBe('android:debuggable'); // the decoy: android's namespace, no id, first
    expect(attrs).toContain('android:debuggable(0x0101000f)');
    expect(await badging(apk)).toMatch(/^application-debuggable$/m);
    const r = await scan(apk);
    expect(only(r, 'android.debuggable').detail).toContain('android:debuggable="true"');
  });

  test('a decoy android:networkSecurityConfig without an id does not silence cleartext traffic', async () => {
    const strict = '<network-security-config><base-config cleartextTrafficPermitted="false"/></network-security-config>';
    const apk = await crafted(manifest({ app: ' android:usesCleartextTraffic="true" d:networkSecurityConfix="@xml/network_security_config"' }), (xml) =>
      renameString(renameString(xml, DECOY, ANDROID), 'networkSecurityConfix', 'networkSecurityConfig'), strict);
    const attrs = await aaptAttributes(apk, 'application');
    expect(attrs).toContain('android:networkSecurityConfig');
    expect(attrs.some((a) => a.startsWith('android:networkSecurityConfig('))).toBe(false);
    expect(await badging(apk)).not.toMatch(/^application-debuggable$/m);
    expect(only(await scan(apk), 'android.cleartext-traffic').severity).toBe('high');
  });

  test('two package attributes make the package unreadable', async () => {
    const apk = await crafted(manifest({ root: ' packagf="com.example.attacker"' }), (xml) => renameString(xml, 'packagf', 'package'));
    const attrs = await aaptAttributes(apk, 'manifest');
    expect(attrs.filter((a) => a === 'package')).toHaveLength(2);
    expect(await badging(apk)).toMatch(/^package: name='com\.example\.victim'/m);
    const r = await scan(apk);
    expect(ids(r)).toEqual(['package.unreadable']);
    expect(r.findings[0].detail).toContain('two package attributes');
  });

  test('a manifest without a package attribute is unreadable, never named after the file', async () => {
    const apk = await crafted(manifest(), (xml) => renameString(xml, 'package', 'packagf'));
    expect(await aaptAttributes(apk, 'manifest')).not.toContain('package');
    const r = await scan(apk);
    expect(ids(r)).toEqual(['package.unreadable']);
    expect(r.findings[0].detail).toContain('no package attribute');
  });

  test('an attribute named android:exported that carries debuggable\'s id is unreadable', async () => {
    const apk = await crafted(manifest({ body: '<activity android:name=".Main" android:exported="false"/>' }), (xml) => setResourceId(xml, 'exported', DEBUGGABLE));
    expect(await aaptAttributes(apk, 'activity')).toContain('android:exported(0x0101000f)');
    const r = await scan(apk);
    expect(ids(r)).toEqual(['package.unreadable']);
    expect(r.findings[0].detail).toContain('android:exported but gives it resource id 0x0101000f');
  });

  test('two attributes of one framework id are unreadable', async () => {
    const apk = await crafted(manifest({ app: ' android:debuggable="false" android:testOnly="true"' }), (xml) => setResourceId(xml, 'testOnly', DEBUGGABLE));
    const attrs = await aaptAttributes(apk, 'application');
    expect(attrs.filter((a) => a.endsWith('(0x0101000f)'))).toHaveLength(2);
    expect(ids(await scan(apk))).toEqual(['package.unreadable']);
  });

  test('framework attributes out of ascending id order are unreadable (Android\'s styleable merge skips some)', async () => {
    const apk = await crafted(manifest({ app: ' android:debuggable="true"' }), (xml) => moveAttribute(xml, 'application', 'debuggable', 3));
    const attrs = await aaptAttributes(apk, 'application');
    const idsInOrder = attrs.map((a) => /\(0x([0-9a-f]+)\)/.exec(a)?.[1]).filter((x): x is string => !!x).map((x) => parseInt(x, 16));
    expect(idsInOrder).not.toEqual([...idsInOrder].sort((a, b) => a - b));
    expect(ids(await scan(apk))).toEqual(['package.unreadable']);
  });

  test('an android:-named attribute whose namespace is dropped is not read as the framework attribute by name', async () => {
    // A plain (namespace-less) attribute with debuggable's id is still debuggable on the device: ids decide.
    const apk = await crafted(manifest({ app: ' android:debuggable="true"' }), (xml) => setAttributeNamespace(xml, 'application', 'debuggable', null));
    expect(await aaptAttributes(apk, 'application')).toContain('debuggable(0x0101000f)');
    expect(await badging(apk)).toMatch(/^application-debuggable$/m);
    expect(ids(await scan(apk))).toContain('android.debuggable');
  });

  test('an honest manifest reads as aapt reads it', async () => {
    const apk = await crafted(manifest({ app: ' android:debuggable="true"' }), (xml) => xml);
    const name = /^package: name='([^']+)'/m.exec(await badging(apk))![1];
    const r = await scan(apk);
    expect(r.target.name).toBe(name);
    expect(ids(r)).toContain('android.debuggable');
  });
});
