// Protects: an analysis tells who is asking (AnalyzeOptions.onTarget) the package's name and version (and an APK's
// version code) as soon as its manifest or Info.plist is read, exactly the target the analysis then returns (redacted
// and bounded alike), once; and never for a package that names nothing. A scan job records that name to stop other
// packages' builds waiting for it.
import { analyzePackage, type StaticAnalysis } from '../../../src/scan/static/analyze-package';
import { androidManifest, buildApk, buildIpa, buildZip, cleanupFixtures } from '../../fixtures/build-packages';

jest.setTimeout(120_000);
afterAll(cleanupFixtures);

async function analyse(file: string, platform: 'android' | 'ios'): Promise<{ told: Array<StaticAnalysis['target']>; analysis: StaticAnalysis }> {
  const told: Array<StaticAnalysis['target']> = [];
  const analysis = await analyzePackage(file, platform, { onTarget: (t) => told.push(t) });
  return { told, analysis };
}

it('tells an APK\'s package and version once, as the analysis returns them', async () => {
  const apk = await buildApk({ manifest: androidManifest({ packageName: 'com.example.told', versionName: '4.5.6' }), sign: 'release' });
  const { told, analysis } = await analyse(apk, 'android');
  expect(analysis.target).toEqual({ name: 'com.example.told', version: '4.5.6', versionCode: 7 });
  expect(told).toEqual([analysis.target]);
});

it('tells a version carrying a token redacted, as the returned target has it', async () => {
  const token = `ghp_${'A1b2C3d4E5'.repeat(3)}abcdef`;
  const apk = await buildApk({ manifest: androidManifest({ packageName: 'com.example.secret', versionName: token }), sign: 'release' });
  const { told, analysis } = await analyse(apk, 'android');
  expect(analysis.target.version).not.toContain(token);
  expect(told).toEqual([analysis.target]);
});

it('tells an IPA\'s bundle id and version once, as the analysis returns them', async () => {
  const ipa = await buildIpa({ infoPlist: { CFBundleIdentifier: 'com.example.toldios', CFBundleShortVersionString: '2.0' }, binary: true });
  const { told, analysis } = await analyse(ipa, 'ios');
  // An IPA has no version code: CFBundleVersion is text, and no attestation reports one.
  expect(analysis.target).toEqual({ name: 'com.example.toldios', version: '2.0', versionCode: null });
  expect(told).toEqual([analysis.target]);
});

it('tells nothing for a package that names nothing', async () => {
  const zip = await buildZip({ 'assets/readme.txt': 'no manifest here' }, 'nameless.apk');
  const { told, analysis } = await analyse(zip, 'android');
  expect(analysis.findings.map((f) => f.id)).toEqual(['package.unreadable']);
  expect(told).toEqual([]);
});
