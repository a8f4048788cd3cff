// No secret rule fires on real packages that hold no secret: Android's framework-res.apk (Debian's
// android-framework-res: thousands of resource strings and raw resources), DEX made by D8 from real libraries
// (apksig, commons-lang3, commons-compress, guava: crypto names, base64 tables, long identifiers) and every text
// entry of apktool's jars.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { PackageZip } from '../../../src/scan/static/package/zip-reader';
import { isAndroidSecretEntry } from '../../../src/scan/static/android/android-contents';
import { SecretCollector } from '../../../src/scan/static/secrets/collector';
import { TextBudget, scanTextEntry } from '../../../src/scan/static/secrets/text-entries';
import { buildZip, cleanupFixtures, FRAMEWORK_RES } from '../../fixtures/build-packages';
import { dexCorpus } from '../../fixtures/dex-corpus';
import { scanApkContents } from '../../fixtures/secret-packages';
import { requireHostPath } from '../../support/host-tools';

jest.setTimeout(240_000);
afterAll(cleanupFixtures);

const APKTOOL = '/usr/share/apktool';

const scanApk = scanApkContents;

describe('no secret rule fires on clean, real packages', () => {
  test('framework-res.apk (resources.arsc strings, res/raw, assets)', async () => {
    const zip = await PackageZip.open(FRAMEWORK_RES, isAndroidSecretEntry);
    const searched = zip.names().length;
    zip.close();
    expect(searched).toBeGreaterThan(1);
    expect((await scanApk(FRAMEWORK_RES)).findings).toEqual([]);
  });

  test('DEX from real jars (D8)', async () => {
    const { cleanDex } = await dexCorpus();
    const entries: Record<string, Buffer> = {};
    for (const [i, file] of cleanDex.entries()) entries[i === 0 ? 'classes.dex' : `classes${i + 1}.dex`] = await readFile(file);
    const result = await scanApk(await buildZip(entries, 'clean.apk'));
    expect(result.dexTypePackages).toEqual(expect.arrayContaining(['com.google.common.collect', 'org.apache.commons.lang3', 'com.android.apksig']));
    expect(result.findings).toEqual([]);
  });

  test('every text entry of apktool\'s jars', async () => {
    const jars = (await readdir(requireHostPath(APKTOOL))).filter((j) => j.endsWith('.jar'));
    expect(jars.length).toBeGreaterThan(0);
    const collector = new SecretCollector();
    let searched = 0;
    for (const jar of jars) {
      const zip = await PackageZip.open(path.join(APKTOOL, jar), (n) => !n.endsWith('/') && !n.endsWith('.class'));
      try {
        const budget = new TextBudget();
        for (const name of zip.names()) {
          await scanTextEntry(zip, name, collector, budget);
          searched++;
        }
      } finally {
        zip.close();
      }
    }
    expect(searched).toBeGreaterThan(20);
    expect(collector.findings()).toEqual([]);
  });
});
