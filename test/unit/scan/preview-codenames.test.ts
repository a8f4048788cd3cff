// Protects: a preview codename written as minSdkVersion ("Baklava", "MNC", "P") is verified at the level apksig takes
// for it (src/scan/static/signing/codename-sdk.ts), so the signature verdict equals apksig's: a JAR signature with
// SHA-256 digests, valid from API 18, fails for a codename apksig reads as API 1 and passes for one it reads as 26.
// Each package is built by aapt and signed by apksigner (told minSdk 24, so it writes SHA-256 JAR digests); the
// expected verdict is apksig's (tools/apksig-oracle), reading the codename from the manifest itself.
import { mkdtempSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { FRAMEWORK_RES, keystore, STOREPASS, cleanupFixtures } from '../../fixtures/build-packages';
import { apksigVerify, describeApksigVerdict } from '../../support/apksig-oracle';
import { run } from '../../support/host-tools';
import { scan } from './helpers';

jest.setTimeout(300_000);
const work = mkdtempSync(path.join(os.tmpdir(), 'shieldgate-codenames-'));
afterAll(async () => {
  await cleanupFixtures();
  await rm(work, { recursive: true, force: true });
});

async function signedWithCodename(codename: string): Promise<string> {
  const dir = path.join(work, codename);
  await run('mkdir', ['-p', dir]);
  await writeFile(path.join(dir, 'AndroidManifest.xml'), `<?xml version="1.0" encoding="utf-8"?>
<manifest xmlns:android="http://schemas.android.com/apk/res/android" package="com.example.preview" android:versionCode="1" android:versionName="1.0">
  <uses-sdk android:minSdkVersion="${codename}" android:targetSdkVersion="29"/>
  <application android:label="Preview" android:allowBackup="false"/>
</manifest>
`);
  await run('aapt', ['package', '-f', '-M', path.join(dir, 'AndroidManifest.xml'), '-I', FRAMEWORK_RES, '-F', path.join(dir, 'unaligned.apk')]);
  await run('zipalign', ['-f', '4', path.join(dir, 'unaligned.apk'), path.join(dir, 'aligned.apk')]);
  const out = path.join(dir, 'app.apk');
  await run('apksigner', ['sign', '--ks', await keystore('release'), '--ks-pass', `pass:${STOREPASS}`, '--key-pass', `pass:${STOREPASS}`,
    '--min-sdk-version', '24', '--v1-signing-enabled', 'true', '--v2-signing-enabled', 'true', '--v3-signing-enabled', 'false', '--out', out, path.join(dir, 'aligned.apk')]);
  return out;
}

test('a codename minSdkVersion is verified as apksig verifies it', async () => {
  const codenames = ['Baklava', 'MNC', 'P', 'VanillaIceCream'];
  const files = await Promise.all(codenames.map(signedWithCodename));
  const verdicts = await apksigVerify(files.map((file) => ({ file })));
  const rows = [];
  for (const [i, file] of files.entries()) {
    const r = await scan(file);
    rows.push({ codename: codenames[i], verified: r.signing?.verified, apksig: verdicts[i].verified, why: describeApksigVerdict(verdicts[i]) });
  }
  expect(rows.filter((r) => r.apksig).length).toBeGreaterThan(0);
  expect(rows.filter((r) => !r.apksig).length).toBeGreaterThan(0);
  for (const r of rows) expect({ codename: r.codename, verified: r.verified }).toEqual({ codename: r.codename, verified: r.apksig });
});
