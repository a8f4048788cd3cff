// Protects: the verifier finds a package's sections as apksig does, and the rules' zip reader the central directory
// Android's zip library finds, so that no reader of the package can be pointed at other sections than those verified. apksigner is the
// oracle; the packages are signed by apksigner and changed after signing where no signature covers them.
import { readFile, writeFile } from 'node:fs/promises';
import { buildApk, cleanupFixtures } from '../../fixtures/build-packages';
import { readEntry } from '../../fixtures/signing-corpus';
import { apksignerVerdict } from '../../support/apksigner-verdict';
import { ids, manifest, scan } from './helpers';
import { aaptDebuggable, centralTailOffset, hiddenDirectoryTail, withCentralTail } from './zip-tricks';

jest.setTimeout(120_000);
afterAll(cleanupFixtures);

describe('zip sections', () => {
  it('reads the manifest Android reads when a Zip64 locator, which Android ignores, leads other zip readers to a decoy', async () => {
    // A JAR-signed APK: its central directory's extra fields are covered by no signature, so anyone can do this.
    const apk = await buildApk({ manifest: manifest({ targetSdk: 29, application: { 'android:debuggable': 'true' } }), sign: 'v1-only' });
    const decoy = readEntry(await readFile(await buildApk({ manifest: manifest({ targetSdk: 29 }), sign: 'none' })), 'AndroidManifest.xml');
    const signed = await readFile(apk);
    await writeFile(apk, withCentralTail(signed, hiddenDirectoryTail(centralTailOffset(signed), 'AndroidManifest.xml', decoy)));
    expect((await apksignerVerdict(apk)).verified).toBe(true);
    expect(await aaptDebuggable(apk)).toBe(true);
    const r = await scan(apk);
    expect(ids(r)).not.toContain('package.unreadable');
    expect(ids(r).includes('android.debuggable')).toBe(await aaptDebuggable(apk));
  });
});
