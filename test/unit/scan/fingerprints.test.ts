// Protects: the fingerprint of every rule that can fire more than once per scan (exported components and their
// permissions and task rules, special permissions, network security config domains and trust anchors, signing
// certificates, ATS exception domains, missing purpose strings): the same across two builds of one package that
// differ in version and SDK levels, different for two instances of one rule, and the SHA-256 of the rule id, the
// place the real tools name (aapt's package, apksigner's certificate digest, the plist's domain) and the package.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { buildApk, buildIpa, cleanupFixtures, xmlPlist } from '../../fixtures/build-packages';
import { machoCorpus } from '../../fixtures/macho-corpus';
import { apksignerVerdict } from '../../support/apksigner-verdict';
import { fingerprintOf } from '../../../src/scan/fingerprint';
import type { Finding } from '../../../src/scan';
import { manifest, scan } from './helpers';

jest.setTimeout(240_000);
afterAll(cleanupFixtures);

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const PKG = 'com.example.app';

/** Fingerprints of the findings of `id`, keyed by the fingerprint, as a scan of `pkg` stores them. */
function prints(findings: Finding[], id: string, pkg = PKG): string[] {
  return findings.filter((f) => f.id === id).map((f) => fingerprintOf(f, pkg)).sort();
}

const BODY = [
  '<activity android:name=".Alpha" android:exported="true" android:taskAffinity="com.other.task" android:launchMode="singleTask"/>',
  '<activity android:name=".Beta" android:exported="true" android:taskAffinity="com.other.task" android:launchMode="singleTask"/>',
  '<service android:name=".Sync" android:exported="true" android:permission="com.example.app.WEAK"/>',
  '<service android:name=".Push" android:exported="true" android:permission="com.example.app.WEAK"/>',
].join('\n');
const PERMS = [
  '<permission android:name="com.example.app.WEAK" android:protectionLevel="normal"/>',
  '<uses-permission android:name="android.permission.SYSTEM_ALERT_WINDOW"/>',
  '<uses-permission android:name="android.permission.REQUEST_INSTALL_PACKAGES"/>',
].join('\n');
const nsc = (domainsA: string, domainsB: string) => `<?xml version="1.0" encoding="utf-8"?>
<network-security-config>
  <domain-config cleartextTrafficPermitted="true"><domain>${domainsA}</domain><trust-anchors><certificates src="user" overridePins="true"/></trust-anchors></domain-config>
  <domain-config cleartextTrafficPermitted="true"><domain>${domainsB}</domain><trust-anchors><certificates src="user"/></trust-anchors></domain-config>
</network-security-config>`;

async function androidBuild(version: { versionName: string; minSdk: number; targetSdk: number }, configName: string) {
  const apk = await buildApk({
    manifest: manifest({ ...version, body: BODY, manifestExtra: PERMS, application: { 'android:networkSecurityConfig': `@xml/${configName}` } }),
    networkSecurityConfig: nsc('legacy.example.com', 'partner.example.net'),
    networkSecurityConfigName: configName,
    sign: 'weak',
  });
  return { apk, findings: (await scan(apk)).findings };
}

describe('Android fingerprints', () => {
  let one: Awaited<ReturnType<typeof androidBuild>>;
  let two: Awaited<ReturnType<typeof androidBuild>>;
  beforeAll(async () => {
    // Another version, other SDK levels and a renamed config file (resource shrinking renames them): same places.
    one = await androidBuild({ versionName: '1.0.0', minSdk: 21, targetSdk: 29 }, 'network_security_config');
    two = await androidBuild({ versionName: '2.5.1', minSdk: 23, targetSdk: 29 }, 'a');
  });

  it.each([
    ['android.task-affinity', ['Alpha', 'Beta']],
    ['android.task-hijacking', ['Alpha', 'Beta']],
    ['android.exported-weak-permission', ['Push', 'Sync']],
  ])('%s: one per component, named by the class aapt compiled into the manifest', (id, classes) => {
    const expected = classes.map((c) => sha256(`${id}\n${PKG}.${c}\n${PKG}`)).sort();
    expect(prints(one.findings, id)).toEqual(expected);
    expect(prints(two.findings, id)).toEqual(expected);
  });

  it('android.permission-special: one per permission, the same in both builds', () => {
    const expected = ['android.permission.REQUEST_INSTALL_PACKAGES', 'android.permission.SYSTEM_ALERT_WINDOW'].map((p) => sha256(`android.permission-special\n${p}\n${PKG}`)).sort();
    expect(prints(one.findings, 'android.permission-special')).toEqual(expected);
    expect(prints(two.findings, 'android.permission-special')).toEqual(expected);
  });

  it.each(['android.nsc-cleartext-domain', 'android.nsc-user-certificates'])('%s: one per domain-config, whatever the config file is called', (id) => {
    const first = prints(one.findings, id);
    expect(first).toHaveLength(2);
    expect(new Set(first).size).toBe(2);
    expect(prints(two.findings, id)).toEqual(first);
    expect(prints(one.findings, 'android.nsc-override-pins')).toEqual(prints(two.findings, 'android.nsc-override-pins'));
  });

  it('android.weak-signing-key: the certificate apksigner prints, whatever the build', async () => {
    const { signers } = await apksignerVerdict(one.apk);
    const expected = [sha256(`android.weak-signing-key\n${signers[0].sha256.toLowerCase()}\n${PKG}`)];
    expect(prints(one.findings, 'android.weak-signing-key')).toEqual(expected);
    expect(prints(two.findings, 'android.weak-signing-key')).toEqual(expected);
  });

  it('differs by package: the same problem in another package of the app is another finding', () => {
    const f = one.findings.find((x) => x.id === 'android.task-affinity') as Finding;
    expect(fingerprintOf(f, PKG)).not.toBe(fingerprintOf(f, 'com.example.other'));
  });
});

describe('iOS fingerprints', () => {
  const INFO = { CFBundleIdentifier: PKG, MinimumOSVersion: '16.0' };
  const ATS = {
    NSAppTransportSecurity: {
      NSExceptionDomains: {
        'legacy.example.com': { NSExceptionAllowsInsecureHTTPLoads: true, NSExceptionMinimumTLSVersion: 'TLSv1.0', NSExceptionRequiresForwardSecrecy: false },
        'partner.example.net': { NSExceptionAllowsInsecureHTTPLoads: true, NSExceptionMinimumTLSVersion: 'TLSv1.1', NSExceptionRequiresForwardSecrecy: false },
      },
    },
  };

  async function iosBuild(version: string) {
    const corpus = await machoCorpus();
    const exe = (name: string) => readFile(corpus.fixtures.find((f) => f.name === name)?.file ?? '');
    const ipa = await buildIpa({
      infoPlist: { ...INFO, ...ATS, CFBundleShortVersionString: version, CFBundleVersion: version.replace(/\./g, '') },
      binary: true,
      resources: {
        Example: await exe('links-corelocation'),
        'Frameworks/Cam.framework/Info.plist': xmlPlist({ CFBundleIdentifier: 'com.example.cam', CFBundleExecutable: 'Cam', CFBundlePackageType: 'FMWK' }),
        'Frameworks/Cam.framework/Cam': await exe('links-avfoundation-camera'),
      },
    });
    return (await scan(ipa, 'ios')).findings;
  }

  let one: Finding[];
  let two: Finding[];
  beforeAll(async () => {
    one = await iosBuild('1.0');
    two = await iosBuild('3.2.1');
  });

  it.each(['ios.ats-insecure-http-domain', 'ios.ats-weak-tls-domain', 'ios.ats-no-forward-secrecy'])('%s: one per exception domain of Info.plist', (id) => {
    const expected = ['legacy.example.com', 'partner.example.net'].map((d) => sha256(`${id}\n${d}\n${PKG}`)).sort();
    expect(prints(one, id)).toEqual(expected);
    expect(prints(two, id)).toEqual(expected);
  });

  it('ios.usage-description-missing: one per missing purpose string', () => {
    const expected = ['NSCameraUsageDescription', 'NSLocationWhenInUseUsageDescription'].map((k) => sha256(`ios.usage-description-missing\n${k}\n${PKG}`)).sort();
    expect(prints(one, 'ios.usage-description-missing')).toEqual(expected);
    expect(prints(two, 'ios.usage-description-missing')).toEqual(expected);
  });
});
