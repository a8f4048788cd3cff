// Protects: ios.privacy-manifest-missing (no PrivacyInfo.xcprivacy, naming embedded frameworks without theirs),
// ios.usage-description-missing (a linked protected API without its purpose string, ITMS-90683; AVFoundation used
// for playback alone needs no camera key) and ios.sdk-outdated (DTPlatformVersion below the App Store's minimum SDK
// in force on the scan's date, the clock pinned on both sides of 2025-04-24 and 2026-04-28); the iOS analysis
// reports the secret scan's findings for the bundle's files.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { APP_STORE_MIN_SDK } from '../../../src/scan/static/catalog/store-requirements';
import { buildIpa, cleanupFixtures, xmlPlist } from '../../fixtures/build-packages';
import { machoCorpus, type MachoCorpus } from '../../fixtures/macho-corpus';
import { otoolFacts } from '../../support/otool-facts';
import { expectWellFormed, ids, only, scan } from './helpers';

jest.setTimeout(180_000);
afterAll(cleanupFixtures);

const INFO = { CFBundleIdentifier: 'com.example.app', CFBundleShortVersionString: '1.0', MinimumOSVersion: '16.0' };
let corpus: MachoCorpus;
beforeAll(async () => {
  corpus = await machoCorpus();
});
const file = (name: string) => corpus.fixtures.find((f) => f.name === name)?.file ?? '';

async function ipa(exe: string, info: Record<string, unknown> = {}, extra: Parameters<typeof buildIpa>[0] extends infer O ? Partial<O> : never = {}): Promise<string> {
  return buildIpa({ infoPlist: { ...INFO, ...info }, binary: true, ...extra, resources: { Example: await readFile(file(exe)), ...extra.resources } });
}

describe('ios.privacy-manifest-missing', () => {
  it('fires without PrivacyInfo.xcprivacy, naming frameworks without theirs, and not with it', async () => {
    const fw = {
      'Frameworks/Foo.framework/Info.plist': xmlPlist({ CFBundleIdentifier: 'com.example.foo', CFBundleExecutable: 'Foo', CFBundlePackageType: 'FMWK' }),
      'Frameworks/Foo.framework/Foo': await readFile(file('hardened')),
    };
    const r = await scan(await ipa('hardened', {}, { noPrivacyManifest: true, resources: fw }), 'ios');
    expectWellFormed(r);
    const f = only(r, 'ios.privacy-manifest-missing');
    expect(f.severity).toBe('medium');
    expect(f.detail).toContain('Payload/Example.app/PrivacyInfo.xcprivacy');
    expect(f.detail).toContain('Foo');
    expect(ids(await scan(await ipa('hardened', {}, { resources: fw }), 'ios'))).not.toContain('ios.privacy-manifest-missing');
  });
});

describe('ios.usage-description-missing', () => {
  const LOCATION = { NSLocationWhenInUseUsageDescription: 'Show stores near you.' };

  it('fires when CoreLocation is linked (as llvm-otool -l shows) and Info.plist has no location purpose string', async () => {
    expect((await otoolFacts(file('links-corelocation')))[0].dylibs).toContain('/System/Library/Frameworks/CoreLocation.framework/CoreLocation');
    const f = only(await scan(await ipa('links-corelocation'), 'ios'), 'ios.usage-description-missing');
    expect(f.severity).toBe('medium');
    expect(f.detail).toContain('Payload/Example.app/Example');
    expect(f.detail).toContain('NSLocationWhenInUseUsageDescription');
    expect(f.detail).toContain('ITMS-90683');
    expect(f.fix).toContain('<key>NSLocationWhenInUseUsageDescription</key>');
    expect(ids(await scan(await ipa('links-corelocation', LOCATION), 'ios'))).not.toContain('ios.usage-description-missing');
  });

  it('an empty purpose string is as missing as none', async () => {
    expect(ids(await scan(await ipa('links-corelocation', { NSLocationWhenInUseUsageDescription: '  ' }), 'ios'))).toContain('ios.usage-description-missing');
  });

  it('asks for the camera key where AVCaptureDevice is imported (llvm-nm -u), not for AVFoundation playback alone', async () => {
    expect((await otoolFacts(file('links-avfoundation-camera')))[0].undefined).toContain('_OBJC_CLASS_$_AVCaptureDevice');
    expect((await otoolFacts(file('links-avfoundation-playback')))[0].undefined).not.toContain('_OBJC_CLASS_$_AVCaptureDevice');
    expect(only(await scan(await ipa('links-avfoundation-camera'), 'ios'), 'ios.usage-description-missing').detail).toContain('NSCameraUsageDescription');
    expect(ids(await scan(await ipa('links-avfoundation-camera', { NSCameraUsageDescription: 'Scan receipts.' }), 'ios'))).not.toContain('ios.usage-description-missing');
    expect(ids(await scan(await ipa('links-avfoundation-playback'), 'ios'))).not.toContain('ios.usage-description-missing');
  });

  it('stays quiet for an executable that links no protected framework', async () => {
    expect(ids(await scan(await ipa('hardened'), 'ios'))).not.toContain('ios.usage-description-missing');
  });
});

describe('ios.sdk-outdated against the dated App Store minimum', () => {
  const day = (d: string, offset: number) => new Date(Date.parse(`${d}T00:00:00Z`) + offset * 86_400_000 + 12 * 3_600_000);
  const entry = (date: string) => APP_STORE_MIN_SDK.find((e) => e.effective === date);
  let sdk18: string;
  let sdk26: string;
  let sdk17: string;
  beforeAll(async () => {
    sdk18 = await ipa('hardened', { DTPlatformVersion: '18.0', DTSDKName: 'iphoneos18.0', DTXcode: '1600' });
    sdk26 = await ipa('hardened', { DTPlatformVersion: '26.0', DTSDKName: 'iphoneos26.0', DTXcode: '2600' });
    sdk17 = await ipa('hardened', { DTPlatformVersion: '17.5', DTSDKName: 'iphoneos17.5' });
  });

  it('iOS 18 SDK: accepted the day before 2026-04-28, refused from that day, naming Xcode 26', async () => {
    expect(entry('2026-04-28')).toBeDefined();
    expect(ids(await scan(sdk18, 'ios', day('2026-04-28', -1)))).not.toContain('ios.sdk-outdated');
    const f = only(await scan(sdk18, 'ios', day('2026-04-28', 0)), 'ios.sdk-outdated');
    expect(f.severity).toBe('high');
    expect(f.detail).toContain('18.0');
    expect(f.fix).toContain(`Xcode ${entry('2026-04-28')?.xcode}`);
    expect(ids(await scan(sdk26, 'ios', day('2026-04-28', 0)))).not.toContain('ios.sdk-outdated');
  });

  it('iOS 17 SDK: accepted the day before 2025-04-24, refused from that day, naming Xcode 16', async () => {
    expect(ids(await scan(sdk17, 'ios', day('2025-04-24', -1)))).not.toContain('ios.sdk-outdated');
    const f = only(await scan(sdk17, 'ios', day('2025-04-24', 0)), 'ios.sdk-outdated');
    expect(f.fix).toContain(`Xcode ${entry('2025-04-24')?.xcode}`);
    expect(ids(await scan(sdk18, 'ios', day('2025-04-24', 0)))).not.toContain('ios.sdk-outdated');
  });

  it('says nothing when Info.plist names no SDK', async () => {
    expect(ids(await scan(await ipa('hardened'), 'ios', day('2026-04-28', 0)))).not.toContain('ios.sdk-outdated');
  });
});

describe('secrets in the bundle', () => {
  it('a token planted in a JSON file of the app is reported, quoting at most its first 4 characters', async () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
    const token = `ghp_${[...randomBytes(36)].map((b) => alphabet[b % alphabet.length]).join('')}`;
    const r = await scan(await ipa('hardened', {}, { resources: { 'config.json': JSON.stringify({ token }) } }), 'ios');
    const f = only(r, 'package.secret-github');
    expect(f.detail).toContain('config.json');
    expect(JSON.stringify(r)).not.toContain(token.slice(4));
  });
});
