// Protects: the manifest the rules read is the entry Android reads. Android (libziparchive) and apksig name an entry
// by the bytes of its central-directory record; a zip reader that takes a name from elsewhere (Info-ZIP's Unicode
// Path extra field, backslashes read as slashes) can be shown a decoy manifest beside the real one, in a package
// that verifies. aapt, which opens the manifest as Android does, is the oracle for what is installed.
import { readFile } from 'node:fs/promises';
import { buildApk, cleanupFixtures } from '../../fixtures/build-packages';
import { readEntry } from '../../fixtures/signing-corpus';
import { apksignerVerdict } from '../../support/apksigner-verdict';
import { ids, manifest, scan } from './helpers';
import { aaptDebuggable, aaptXmlTree, entriesOf, rawZip, signedApk, unicodePathExtra } from './zip-tricks';

jest.setTimeout(120_000);
afterAll(cleanupFixtures);

/** A compiled manifest (aapt) without findings, and one with android:debuggable="true". */
async function manifests(): Promise<{ benign: Buffer; debuggable: Buffer }> {
  const compiled = async (text: string) => readEntry(await readFile(await buildApk({ manifest: text, sign: 'none' })), 'AndroidManifest.xml');
  return { benign: await compiled(manifest()), debuggable: await compiled(manifest({ application: { 'android:debuggable': 'true' } })) };
}

/**
 * The package, signed, verifies with apksigner; aapt (which opens entries as Android does) reads the debuggable
 * manifest; and the scan reads the same one, so a decoy earlier in the archive changes nothing.
 */
async function expectTheInstalledManifest(zip: Parameters<typeof signedApk>[0]): Promise<void> {
  const apk = await signedApk(zip);
  expect((await apksignerVerdict(apk)).verified).toBe(true);
  const installed = await aaptDebuggable(apk);
  expect(installed).toBe(true);
  const r = await scan(apk);
  expect(r.signing).toMatchObject({ verified: true });
  expect(ids(r).includes('android.debuggable')).toBe(installed);
}

describe('entry names as Android reads them', () => {
  it('reads the manifest Android installs, not a decoy named by a Unicode Path extra field', async () => {
    const { benign, debuggable } = await manifests();
    await expectTheInstalledManifest(rawZip([
      { name: 'assets/decoy.bin', data: benign, centralExtra: unicodePathExtra('assets/decoy.bin', 'AndroidManifest.xml') },
      { name: 'AndroidManifest.xml', data: debuggable },
    ]));
  });

  it('reads the manifest Android installs, not a decoy whose name starts with a byte-order mark', async () => {
    const { benign, debuggable } = await manifests();
    await expectTheInstalledManifest(rawZip([
      { name: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('AndroidManifest.xml')]), data: benign, flags: 0x800 },
      { name: 'AndroidManifest.xml', data: debuggable },
    ]));
  });
});

describe('entry names with backslashes', () => {
  it('reads the network security config Android uses, not one whose stored name has backslashes', async () => {
    const nsc = (cleartext: boolean) => `<?xml version="1.0" encoding="utf-8"?>
<network-security-config><base-config cleartextTrafficPermitted="${cleartext}"/></network-security-config>`;
    const m = manifest({ application: { 'android:networkSecurityConfig': '@xml/network_security_config' } });
    const real = await entriesOf(await buildApk({ manifest: m, networkSecurityConfig: nsc(true), sign: 'none' }));
    const decoy = (await entriesOf(await buildApk({ manifest: m, networkSecurityConfig: nsc(false), sign: 'none' })))
      .find((e) => e.name === 'res/xml/network_security_config.xml')!;
    const apk = await signedApk(rawZip([{ name: 'res\\xml\\network_security_config.xml', data: decoy.data }, ...real]));
    expect((await apksignerVerdict(apk)).verified).toBe(true);
    const installed = await aaptXmlTree(apk, 'res/xml/network_security_config.xml');
    const permitted = /cleartextTrafficPermitted.*=\(type 0x12\)0xffffffff/.test(installed);
    expect(permitted).toBe(true);
    const r = await scan(apk);
    expect(r.signing).toMatchObject({ verified: true });
    expect(ids(r).includes('android.nsc-cleartext')).toBe(permitted);
  });
});
