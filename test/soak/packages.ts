/**
 * The packages the soak's CI jobs upload: real APKs (aapt, zipalign, apksigner) and IPAs (clang, ld64.lld,
 * rcodesign), built once per run by the same builders as the tests' fixtures, in a few sizes.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { androidManifest, buildApk, buildIpa } from '../fixtures/build-packages';

export interface SoakPackage {
  label: string;
  platform: 'android' | 'ios';
  bytes: Buffer;
  sha256: string;
}

const load = (label: string, platform: SoakPackage['platform'], file: string): SoakPackage => {
  const bytes = readFileSync(file);
  return { label, platform, bytes, sha256: createHash('sha256').update(bytes).digest('hex') };
};

export async function buildSoakPackages(): Promise<SoakPackage[]> {
  const manifest = (name: string, target: number) => androidManifest({ packageName: `com.example.soak.${name}`, minSdk: 24, targetSdk: target });
  const apks = await Promise.all([
    buildApk({ manifest: manifest('small', 35), sign: 'release' }).then((f) => load('apk-small', 'android', f)),
    buildApk({ manifest: manifest('debug', 33), sign: 'debug', padBytes: 256 * 1024 }).then((f) => load('apk-debug', 'android', f)),
    buildApk({ manifest: manifest('medium', 36), sign: 'release', padBytes: 1024 * 1024 }).then((f) => load('apk-1mb', 'android', f)),
    buildApk({ manifest: manifest('large', 36), sign: 'release', padBytes: 4 * 1024 * 1024, schemes: { v1: false, v2: true, v3: true } }).then((f) => load('apk-4mb', 'android', f)),
  ]);
  const info = (id: string) => ({ CFBundleIdentifier: `com.example.soak.${id}`, CFBundleShortVersionString: '1.0.0', CFBundleVersion: '1', MinimumOSVersion: '16.0' });
  const ipas = [
    load('ipa-small', 'ios', await buildIpa({ appName: 'Soak', infoPlist: info('ios'), binary: true })),
    load('ipa-assets', 'ios', await buildIpa({ appName: 'SoakAssets', infoPlist: info('assets'), binary: false, resources: { 'assets/blob.bin': Buffer.alloc(512 * 1024, 7) } })),
  ];
  return [...apks, ...ipas];
}
