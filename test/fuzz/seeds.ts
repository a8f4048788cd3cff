// Seed corpora for the fuzz targets: entries of real packages built by aapt, aapt2, apksigner, jarsigner,
// plistutil and openssl (test/fixtures/build-packages.ts). Built once per machine and cached, because the
// Java signers take seconds and the seeds only change when the builders do.
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildAab, buildApk, buildIpa, cleanupFixtures, xmlPlist } from '../fixtures/build-packages';
import { machoSeeds } from './macho-target';
import { elfSeeds } from './elf-target';
import { dexSeeds } from './dex-target';
import { appAttestSeeds } from './app-attest-target';
import { keyAttestationSeeds } from './key-attestation-target';
import { playIntegritySeeds } from './play-integrity-target';
import { oidcClaimsSeeds } from './oidc-claims-target';
import { run } from '../support/host-tools';


/** Bump when the fixtures below change, so a stale cache is not used. */
const CACHE = path.join(os.tmpdir(), 'shieldgate-fuzz-seeds-v7');

export type Seeds = Record<string, Buffer[]>;

const NSC = `<?xml version="1.0" encoding="utf-8"?>
<network-security-config>
  <base-config cleartextTrafficPermitted="false"><trust-anchors><certificates src="system"/></trust-anchors></base-config>
  <domain-config cleartextTrafficPermitted="true"><domain includeSubdomains="true">legacy.example.com</domain></domain-config>
  <debug-overrides><trust-anchors><certificates src="user"/></trust-anchors></debug-overrides>
</network-security-config>
`;

const MANIFEST = `<?xml version="1.0" encoding="utf-8"?>
<manifest xmlns:android="http://schemas.android.com/apk/res/android" package="com.example.fuzz"
    android:versionCode="7" android:versionName="1.2.3">
  <uses-sdk android:minSdkVersion="24" android:targetSdkVersion="34"/>
  <uses-permission android:name="android.permission.INTERNET"/>
  <application android:label="Fuzz" android:allowBackup="true" android:debuggable="true"
      android:networkSecurityConfig="@xml/network_security_config">
    <activity android:name=".Main" android:exported="true">
      <intent-filter>
        <action android:name="android.intent.action.VIEW"/>
        <category android:name="android.intent.category.BROWSABLE"/>
        <data android:scheme="https" android:host="example.com"/>
      </intent-filter>
    </activity>
    <provider android:name=".Files" android:authorities="com.example.fuzz.files" android:exported="true"/>
  </application>
</manifest>
`;

const INFO_PLIST = {
  CFBundleIdentifier: 'com.example.fuzz',
  CFBundleShortVersionString: '1.2.3',
  CFBundleVersion: '42',
  CFBundleURLTypes: [{ CFBundleURLSchemes: ['fuzz', 'https'] }],
  NSAppTransportSecurity: {
    NSAllowsArbitraryLoads: true,
    NSExceptionDomains: { 'legacy.example.com': { NSExceptionAllowsInsecureHTTPLoads: true, NSIncludesSubdomains: true } },
  },
  UIFileSharingEnabled: true,
  Score: 1.5,
  Blob: Buffer.from('seed'),
  Built: new Date('2025-01-01T00:00:00Z'),
};

/**
 * Texts in the shapes the secret rules look for, made up here (no real credential): a PEM body after many bare
 * headers, a JSON service-account key with escaped newlines, tokens of each issuer's shape next to placeholders.
 */
const FAKE_BODY = 'MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u'.repeat(3);
const SECRET_TEXTS = [
  `${'-----BEGIN RSA PRIVATE KEY-----\n'.repeat(64)}${FAKE_BODY}\n-----END RSA PRIVATE KEY-----\n`,
  JSON.stringify({ type: 'service_account', private_key: `-----BEGIN PRIVATE KEY-----\n${FAKE_BODY}\n-----END PRIVATE KEY-----\n` }),
  'ghp_Zq3Lm8Xv2Rt6Yb1Nc5Wd9Kf4Hj7Gs0Pa3Ue6 AKIAQ7LMZ4XV2RT6YB1N q8Zr3Lm8Xv2Rt6Yb1Nc5Wd9Kf4Hj7Gs0Pa3Ue6Tx sk_live_xxxxxxxxxxxxxxxxxxxxxxxxxxxx',
  'xoxb-123456789012-1234567890123-Zq3Lm8Xv2Rt6Yb1Nc5Wd9Kf4 https://hooks.slack.com/services/TABCDEFGH1/BABCDEFGH1/Zq3Lm8Xv2Rt6Yb1Nc5Wd9Kf4',
];
/** Seal rules as CodeResources writes them, each followed by a bundle path. */
const SEAL_RULES = [
  '^Resources/.*\\.lproj/\nResources/en.lproj/Main.strings',
  '^(Frameworks|SharedFrameworks|PlugIns|Plug-ins|XPCServices|Helpers|MacOS|Library/(Automator|Spotlight|LoginItems))/\nFrameworks/A.framework/A',
  '^[^/]+$\nInfo.plist',
  '(a*)*b{2,5}[[:alpha:]]\naaaaaaaaaaaaaaaaaaaaaaaaaaaaaaac',
];

/** Seeds per fuzz target name (see targets.ts). */
export async function loadSeeds(): Promise<Seeds> {
  try {
    return await readCache();
  } catch {
    await buildCache();
    return readCache();
  }
}

async function readCache(): Promise<Seeds> {
  const seeds: Seeds = {};
  for (const target of await readdir(CACHE)) {
    const dir = path.join(CACHE, target);
    seeds[target] = await Promise.all((await readdir(dir)).sort().map((f) => readFile(path.join(dir, f))));
  }
  if (Object.keys(seeds).length === 0) throw new Error('empty seed cache');
  return seeds;
}

async function buildCache(): Promise<void> {
  const apk = await buildApk({ manifest: MANIFEST, networkSecurityConfig: NSC, sign: 'release', schemes: { v1: true, v2: true, v3: false } });
  const apkV3 = await buildApk({ manifest: MANIFEST, networkSecurityConfig: NSC, sign: 'weak', schemes: { v1: false, v2: false, v3: true } });
  const aab = await buildAab({ manifest: MANIFEST, networkSecurityConfig: NSC });
  const ipaBinary = await buildIpa({ binary: true, infoPlist: INFO_PLIST, provision: { devices: ['00008020-000A1C2E3C8A002E'], getTaskAllow: true, apsEnvironment: 'development' } });
  const ipaXml = await buildIpa({ binary: false, infoPlist: INFO_PLIST });
  const profile = await entry(ipaBinary, 'Payload/Example.app/embedded.mobileprovision');
  const signatures = async (file: string) => {
    const names = (await list(file)).filter((n) => /^META-INF\/[^/]+\.(RSA|DSA|EC)$/.test(n));
    return Promise.all(names.map((n) => entry(file, n)));
  };
  const seeds: Seeds = {
    'zip-central-directory': [await readFile(apk), await readFile(aab), await readFile(ipaXml)],
    'binary-xml': [await entry(apk, 'AndroidManifest.xml'), await entry(apk, 'res/xml/network_security_config.xml')],
    'resources-arsc': [await entry(apk, 'resources.arsc')],
    'proto-xml': [await entry(aab, 'base/manifest/AndroidManifest.xml'), await entry(aab, 'base/res/xml/network_security_config.xml')],
    'android-manifest': [await entry(apk, 'AndroidManifest.xml')],
    'secret-text': SECRET_TEXTS.map((t) => Buffer.from(t, 'latin1')),
    'seal-rule-regex': SEAL_RULES.map((t) => Buffer.from(t)),
    'apk-signatures': [await readFile(apk), await readFile(apkV3)],
    pkcs7: [...(await signatures(apk)), ...(await signatures(aab)), profile],
    'xml-plist': [await entry(ipaXml, 'Payload/Example.app/Info.plist'), Buffer.from(xmlPlist({ Entitlements: { 'get-task-allow': true }, ProvisionedDevices: ['a', 'b'] }))],
    'binary-plist': [await entry(ipaBinary, 'Payload/Example.app/Info.plist')],
    mobileprovision: [profile],
    macho: await machoSeeds(),
    elf: await elfSeeds(),
    dex: await dexSeeds(),
    cbor: appAttestSeeds(),
    'app-attest': appAttestSeeds(),
    'key-attestation': keyAttestationSeeds(),
    'play-integrity': await playIntegritySeeds(),
    'oidc-claims': oidcClaimsSeeds(),
  };
  await cleanupFixtures();
  // Written under a temporary name and renamed, so a concurrent reader never sees half a cache.
  const tmp = `${CACHE}.${process.pid}.${Date.now()}`;
  for (const [target, list] of Object.entries(seeds)) {
    await mkdir(path.join(tmp, target), { recursive: true });
    await Promise.all(list.map((buf, i) => writeFile(path.join(tmp, target, `seed-${i}.bin`), buf)));
  }
  // Another process may have renamed its own copy into place first; then this one is not needed.
  await rename(tmp, CACHE).catch(() => rm(tmp, { recursive: true, force: true }));
}

async function list(zip: string): Promise<string[]> {
  const { stdout } = await run('unzip', ['-Z1', zip]);
  return stdout.split('\n').filter(Boolean);
}

async function entry(zip: string, name: string): Promise<Buffer> {
  const { stdout } = await run('unzip', ['-p', zip, name], { encoding: 'buffer', maxBuffer: 64 << 20 });
  if (stdout.length === 0) throw new Error(`${zip} has no entry ${name}`);
  return stdout;
}
