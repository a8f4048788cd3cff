// Protects: analyzePackage never throws; unreadable input (random bytes, empty file, missing file, zip
// without manifest, truncated or source-XML manifest, corrupt plist, oversized entry, wrong platform)
// yields one package.* finding.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { LIMITS } from '../../../src/scan/static/package/limits';
import { buildApk, buildIpa, buildZip, cleanupFixtures, writeRawFile } from '../../fixtures/build-packages';
import { ids, manifest, only, scan } from './helpers';
import { runSync } from '../../support/host-tools';

jest.setTimeout(120_000);
afterAll(cleanupFixtures);

const unreadable = async (file: string, platform: 'android' | 'ios' = 'android') => {
  const r = await scan(file, platform);
  expect(ids(r)).toEqual(['package.unreadable']);
  return only(r, 'package.unreadable');
};

describe('unreadable packages', () => {
  it('reports random bytes, an empty file and a missing file', async () => {
    expect((await unreadable(await writeRawFile('random.apk', randomBytes(4096)))).detail).toContain('not a zip');
    await unreadable(await writeRawFile('empty.ipa', Buffer.alloc(0)), 'ios');
    await unreadable('/nonexistent/shieldgate/app.apk');
  });

  it('reports a zip without a manifest', async () => {
    const f = await unreadable(await buildZip({ 'classes.dex': randomBytes(64) }, 'app.apk'));
    expect(f.detail).toContain('AndroidManifest.xml');
    expect((await unreadable(await buildZip({ 'Payload/readme.txt': 'x' }, 'app.ipa'), 'ios')).detail).toContain('Info.plist');
  });

  it('reports a truncated binary manifest', async () => {
    const apk = await buildApk({ manifest: manifest(), sign: 'none' });
    const real = runSync('unzip', ['-p', apk, 'AndroidManifest.xml']);
    for (const cut of [12, Math.floor(real.length / 2), real.length - 4]) {
      const f = await unreadable(await buildZip({ 'AndroidManifest.xml': real.subarray(0, cut) }, 'app.apk'));
      expect(f.detail).toMatch(/malformed compiled XML|not compiled binary XML/);
    }
  });

  it('reports a manifest in source XML form', async () => {
    const f = await unreadable(await buildZip({ 'AndroidManifest.xml': manifest() }, 'app.apk'));
    expect(f.detail).toContain('source XML');
  });

  it('reports corrupt Info.plist (XML and binary)', async () => {
    await unreadable(await buildZip({ 'Payload/A.app/Info.plist': '<?xml version="1.0"?><plist><dict><key>A</key></plist>' }, 'a.ipa'), 'ios');
    await unreadable(await buildZip({ 'Payload/A.app/Info.plist': Buffer.concat([Buffer.from('bplist00'), randomBytes(40)]) }, 'a.ipa'), 'ios');
  });

  it('refuses to inflate an entry over its cap (zip bomb): the scan is incomplete, naming the limit', async () => {
    const bomb = await buildZip({ 'AndroidManifest.xml': Buffer.alloc(LIMITS.manifest + 1) }, 'bomb.apk');
    expect((await readFile(bomb)).length).toBeLessThan(100_000);
    const r = await scan(bomb);
    expect(ids(r)).toEqual(['scan.incomplete']);
    expect(only(r, 'scan.incomplete').detail).toContain('limit "manifest"');
  });

  it('reports an iOS package given as android and an APK given as ios', async () => {
    const ipa = await buildIpa({ infoPlist: { CFBundleIdentifier: 'com.example.app' }, binary: false });
    expect(ids(await scan(ipa, 'android'))).toEqual(['package.wrong-platform']);
    const apk = await buildApk({ manifest: manifest(), sign: 'none' });
    expect(only(await scan(apk, 'ios'), 'package.wrong-platform').fix).toContain('platform "android"');
  });

  it('survives every truncation of a real APK without throwing', async () => {
    const apk = await readFile(await buildApk({ manifest: manifest(), sign: 'release' }));
    for (const size of [0, 30, 100, Math.floor(apk.length / 3), apk.length - 30, apk.length - 1]) {
      const r = await scan(await writeRawFile('cut.apk', apk.subarray(0, size)));
      expect(r.findings.length).toBeGreaterThan(0);
    }
  });
});
