// Protects: the verifier finds a package's sections as apksig does, so that no reader of the package (yauzl, which
// the rules read through, or the platform) can be pointed at other sections than those verified. apksigner is the
// oracle; the packages are signed by apksigner and changed after signing where no signature covers them.
import { readFile, writeFile } from 'node:fs/promises';
import { buildApk, cleanupFixtures } from '../../fixtures/build-packages';
import { readEntry } from '../../fixtures/signing-corpus';
import { apksignerVerdict } from '../../support/apksigner-verdict';
import { ids, manifest, only, scan } from './helpers';
import { aaptDebuggable, centralTailOffset, hiddenDirectoryTail, withCentralTail } from './zip-tricks';

jest.setTimeout(120_000);
afterAll(cleanupFixtures);

describe('zip sections', () => {
  it('refuses a package whose Zip64 locator, which Android ignores, leads zip readers to a decoy manifest', async () => {
    // A JAR-signed APK: its central directory's extra fields are covered by no signature, so anyone can do this.
    const apk = await buildApk({ manifest: manifest({ targetSdk: 29, application: { 'android:debuggable': 'true' } }), sign: 'v1-only' });
    const decoy = readEntry(await readFile(await buildApk({ manifest: manifest({ targetSdk: 29 }), sign: 'none' })), 'AndroidManifest.xml');
    const signed = await readFile(apk);
    await writeFile(apk, withCentralTail(signed, hiddenDirectoryTail(centralTailOffset(signed), 'AndroidManifest.xml', decoy)));
    expect((await apksignerVerdict(apk)).verified).toBe(true);
    expect(await aaptDebuggable(apk)).toBe(true);
    const r = await scan(apk);
    expect(ids(r)).toEqual(['package.unreadable']);
    expect(only(r, 'package.unreadable').detail).toContain('Zip64');
  });
});
