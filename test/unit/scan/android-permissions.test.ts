import { buildApk } from '../../fixtures/build-packages';
import { DANGEROUS_PERMISSIONS } from '../../../src/scan/static/android/permission-levels';
import { frameworkPermissions, isDangerous } from '../../support/framework-permissions';
import { ids, manifest, only, scan } from './helpers';

const platform = frameworkPermissions();
const uses = (names: string[], extra = '') => names.map((n) => `<uses-permission android:name="${n}"/>`).join('\n  ') + extra;

describe('Android permissions', () => {
  it('knows the platform\'s runtime permissions as framework-res.apk declares them (protectionLevel dangerous)', () => {
    expect(platform.length).toBeGreaterThan(300);
    const fromPlatform = platform.filter((p) => isDangerous(p.level)).map((p) => p.name).sort();
    const ours = [...DANGEROUS_PERMISSIONS].filter(([, api]) => api <= 29).map(([name]) => name).sort();
    expect(ours).toEqual(fromPlatform);
  });

  it('lists exactly the runtime permissions requested in one low finding, computed from the platform\'s levels', async () => {
    const requested = platform.filter((p) => p.name.startsWith('android.permission.')).slice(0, 400).map((p) => p.name);
    const apk = await buildApk({ manifest: manifest({ manifestExtra: uses(requested) }), sign: 'release' });
    const finding = only(await scan(apk), 'android.permission-dangerous');
    const expected = platform.filter((p) => requested.includes(p.name) && isDangerous(p.level)).map((p) => p.name.replace('android.permission.', ''));
    expect(finding.severity).toBe('low');
    expect(finding.title).toBe(`${expected.length} runtime permissions requested`);
    for (const name of expected.slice(0, 40)) expect(finding.detail).toMatch(new RegExp(`\\b${name}\\b`));
    const normal = platform.find((p) => p.name === 'android.permission.INTERNET');
    expect(normal && isDangerous(normal.level)).toBe(false);
    expect(finding.detail).not.toMatch(/\bINTERNET\b/);
  });

  it('gives each special permission its own medium finding, including the BIND_ ones guarding a component', async () => {
    const apk = await buildApk({
      manifest: manifest({
        manifestExtra: uses(['android.permission.SYSTEM_ALERT_WINDOW', 'android.permission.READ_SMS', 'android.permission.INTERNET']),
        body: '<service android:name=".Reader" android:exported="true" android:permission="android.permission.BIND_ACCESSIBILITY_SERVICE"/>',
      }),
      sign: 'release',
    });
    const special = (await scan(apk)).findings.filter((f) => f.id === 'android.permission-special');
    expect(special.map((f) => f.detail.split(' ')[0])).toEqual([
      'android.permission.BIND_ACCESSIBILITY_SERVICE', 'android.permission.READ_SMS', 'android.permission.SYSTEM_ALERT_WINDOW',
    ]);
    expect(special.every((f) => f.severity === 'medium' && f.fix.length > 20)).toBe(true);
    expect(special[0].detail).toContain('com.example.app.Reader');
  });

  it('ignores a permission whose maxSdkVersion is below minSdk, and finds nothing in a manifest that requests none', async () => {
    const capped = await buildApk({ manifest: manifest({ minSdk: 26, manifestExtra: '<uses-permission android:name="android.permission.READ_EXTERNAL_STORAGE" android:maxSdkVersion="22"/>' }), sign: 'release' });
    expect(ids(await scan(capped))).not.toContain('android.permission-dangerous');
    const kept = await buildApk({ manifest: manifest({ minSdk: 26, manifestExtra: '<uses-permission-sdk-23 android:name="android.permission.CAMERA" android:maxSdkVersion="32"/>' }), sign: 'release' });
    expect(only(await scan(kept), 'android.permission-dangerous').detail).toContain('CAMERA');
    const none = await buildApk({ manifest: manifest(), sign: 'release' });
    expect(ids(await scan(none)).filter((id) => id.startsWith('android.permission-'))).toEqual([]);
  });
});
