// Protects: embedded.mobileprovision (CMS-signed by openssl) rules: development profile, get-task-allow,
// sandbox push, enterprise profile, expiry by the injected clock, and an unreadable profile; a bundle without the
// seal codesign writes (_CodeSignature/CodeResources, a signed executable) is unsigned. Packages are signed by
// rcodesign (see ios-seal.test.ts for the seal itself).
import { buildIpa, cleanupFixtures } from '../../fixtures/build-packages';
import { ids, only, scan } from './helpers';

jest.setTimeout(120_000);
afterAll(cleanupFixtures);

const INFO = { CFBundleIdentifier: 'com.example.app', CFBundleShortVersionString: '1.0', MinimumOSVersion: '16.0' };
const withProfile = async (provision: Parameters<typeof buildIpa>[0]['provision'], now?: Date) =>
  scan(await buildIpa({ infoPlist: INFO, binary: true, provision }), 'ios', now);

describe('provisioning profile', () => {
  it('finds nothing in an App Store profile', async () => {
    expect(ids(await withProfile({ getTaskAllow: false, apsEnvironment: 'production' }))).toEqual([]);
  });

  it('flags a development profile with get-task-allow', async () => {
    const r = await withProfile({ devices: ['00008030-001A', '00008030-001B'], getTaskAllow: true, apsEnvironment: 'development' });
    expect(ids(r).sort()).toEqual(['ios.development-profile', 'ios.get-task-allow']);
    expect(only(r, 'ios.development-profile').detail).toContain('2 ProvisionedDevices');
    expect(only(r, 'ios.get-task-allow').severity).toBe('high');
  });

  it('does not call an ad hoc profile (devices, no get-task-allow) a development one', async () => {
    expect(ids(await withProfile({ devices: ['00008030-001A'], getTaskAllow: false, apsEnvironment: 'production' }))).toEqual([]);
  });

  it('flags sandbox push on a distribution profile', async () => {
    expect(ids(await withProfile({ apsEnvironment: 'development' }))).toEqual(['ios.aps-development']);
  });

  it('flags an expired profile by the injected clock', async () => {
    const provision = { expiration: new Date('2025-06-30T00:00:00Z') };
    expect(only(await withProfile(provision), 'ios.profile-expired').detail).toContain('expired on 2025-06-30');
    expect(ids(await withProfile(provision, new Date('2025-01-01T00:00:00Z')))).toEqual([]);
  });

  it('reports a profile without a plist instead of failing the scan', async () => {
    // Sealed by the signature like any file of the bundle, so only the profile is wrong.
    const zip = await buildIpa({ infoPlist: INFO, binary: false, resources: { 'embedded.mobileprovision': Buffer.from([0x30, 0x82, 0x01, 0x00, 0x06, 0x09]) } });
    const r = await scan(zip, 'ios');
    expect(ids(r)).toEqual(['ios.profile-unreadable']);
    expect(r.target.name).toBe('com.example.app');
  });
});

describe('code signature', () => {
  it('flags a bundle codesign never sealed (no _CodeSignature/CodeResources), with or without a profile', async () => {
    const unsigned = await scan(await buildIpa({ infoPlist: INFO, binary: true, unsigned: true }), 'ios');
    expect(ids(unsigned)).toEqual(['ios.unsigned']);
    expect(only(unsigned, 'ios.unsigned').severity).toBe('high');
    expect(ids(await scan(await buildIpa({ infoPlist: INFO, binary: true, unsigned: true, provision: {} }), 'ios'))).toEqual(['ios.unsigned']);
    expect(ids(await scan(await buildIpa({ infoPlist: INFO, binary: true }), 'ios'))).toEqual([]);
  });
});
