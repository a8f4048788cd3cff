// Protects: APK manifest flags (debuggable, testOnly, allowBackup, cleartext traffic) and SDK floors,
// each with a package that triggers the rule and one that does not; a clean release APK has no findings.
import { buildApk, cleanupFixtures } from '../../fixtures/build-packages';
import { expectWellFormed, ids, manifest, only, scan } from './helpers';
import { inForce, PLAY_TARGET_SDK } from '../../../src/scan/static/catalog/store-requirements';

jest.setTimeout(120_000);
afterAll(cleanupFixtures);

const unsigned = (m: string) => buildApk({ manifest: m, sign: 'none' });
const manifestIds = async (m: string) => ids(await scan(await unsigned(m))).filter((id) => id !== 'android.unsigned');

describe('APK manifest rules', () => {
  it('finds nothing in a release-signed APK with safe settings, and names its target', async () => {
    const r = await scan(await buildApk({ manifest: manifest({ versionName: '3.1.4' }), sign: 'release' }));
    expect(r.findings).toEqual([]);
    expect(r.target).toEqual({ name: 'com.example.app', version: '3.1.4', versionCode: 7 });
  });

  it('flags android:debuggable="true" as critical and not "false"', async () => {
    const r = await scan(await unsigned(manifest({ application: { 'android:debuggable': 'true' } })));
    expect(only(r, 'android.debuggable').severity).toBe('critical');
    expect(only(r, 'android.debuggable').detail).toContain('android:debuggable="true"');
    expectWellFormed(r);
    expect(await manifestIds(manifest({ application: { 'android:debuggable': 'false' } }))).toEqual([]);
  });

  it('flags testOnly', async () => {
    expect(await manifestIds(manifest({ application: { 'android:testOnly': 'true' } }))).toEqual(['android.test-only']);
    expect(await manifestIds(manifest({ application: { 'android:testOnly': 'false' } }))).toEqual([]);
  });

  it('flags allowBackup true and absent (default true), lowers severity with backup rules', async () => {
    const explicit = await scan(await unsigned(manifest({ application: { 'android:allowBackup': 'true' } })));
    expect(only(explicit, 'android.allow-backup')).toMatchObject({ severity: 'medium' });
    expect(only(explicit, 'android.allow-backup').detail).toContain('android:allowBackup="true"');
    const absent = await scan(await unsigned(manifest({ application: { 'android:allowBackup': 'true' } }).replace(' android:allowBackup="true"', '')));
    expect(only(absent, 'android.allow-backup').detail).toContain('defaults to true');
    const withRules = await scan(await unsigned(manifest({ application: { 'android:allowBackup': 'true', 'android:fullBackupContent': 'true' } })));
    expect(only(withRules, 'android.allow-backup').severity).toBe('low');
  });

  it('flags usesCleartextTraffic="true", and its absence only when targetSdk < 28', async () => {
    const explicit = await scan(await unsigned(manifest({ application: { 'android:usesCleartextTraffic': 'true' } })));
    expect(only(explicit, 'android.cleartext-traffic').severity).toBe('high');
    expect(await manifestIds(manifest({ application: { 'android:usesCleartextTraffic': 'false' } }))).toEqual([]);
    const legacy = await scan(await unsigned(manifest({ targetSdk: 27 })));
    expect(only(legacy, 'android.cleartext-traffic').detail).toContain('targetSdkVersion is 27');
    const legacyOff = await manifestIds(manifest({ targetSdk: 27, application: { 'android:usesCleartextTraffic': 'false' } }));
    expect(legacyOff).not.toContain('android.cleartext-traffic');
  });

  it('rates minSdk < 21 high, < 24 medium, and 24 clean', async () => {
    expect(only(await scan(await unsigned(manifest({ minSdk: 19 }))), 'android.min-sdk').severity).toBe('high');
    expect(only(await scan(await unsigned(manifest({ minSdk: 23 }))), 'android.min-sdk').severity).toBe('medium');
    expect(await manifestIds(manifest({ minSdk: 24 }))).toEqual([]);
  });

  it('flags a targetSdk below the level Google Play requires on the scan\'s date, naming that level in the fix', async () => {
    const apk = await unsigned(manifest({ targetSdk: 35 }));
    // Play has refused new apps and updates below API 36 since 2026-08-31.
    const today = only(await scan(apk, 'android', new Date('2026-11-26T09:00:00Z')), 'android.target-sdk');
    expect(today).toMatchObject({ severity: 'high' });
    expect(today.detail).toContain('targetSdkVersion is 35');
    expect(today.fix).toContain('targetSdk = 36');
    expect(ids(await scan(apk, 'android', new Date('2026-08-30T23:59:59Z')))).not.toContain('android.target-sdk');
  });

  it.each(PLAY_TARGET_SDK.map((r) => [r.effective, r.level] as const))('reads the Play target level in force from the dated table on both sides of %s (level %i)', async (effective, level) => {
    const apk = await unsigned(manifest({ targetSdk: level - 1 }));
    const dayBefore = new Date(Date.parse(`${effective}T00:00:00Z`) - 1);
    const before = ids(await scan(apk, 'android', dayBefore));
    const previous = inForce(PLAY_TARGET_SDK, dayBefore);
    expect(before.includes('android.target-sdk')).toBe(previous !== null && level - 1 < previous.level);
    const on = only(await scan(apk, 'android', new Date(`${effective}T00:00:00Z`)), 'android.target-sdk');
    expect(on.fix).toContain(`targetSdk = ${level}`);
  });

  it('defaults targetSdk to minSdk when uses-sdk omits it', async () => {
    const r = await scan(await unsigned(manifest({ minSdk: 26, targetSdk: undefined })));
    expect(only(r, 'android.target-sdk').detail).toContain('targetSdkVersion is 26');
  });
});
