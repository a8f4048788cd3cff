// Protects: App Bundles (protobuf XML manifest from aapt2) get the same manifest and network-config rules
// as APKs, their jarsigner signature is checked, and an unsigned bundle is reported.
import { buildAab, cleanupFixtures } from '../../fixtures/build-packages';
import { ids, manifest, only, scan } from './helpers';

jest.setTimeout(120_000);
afterAll(cleanupFixtures);

describe('App Bundle (AAB)', () => {
  it('finds nothing in a safe bundle signed with a release key and names its target', async () => {
    const r = await scan(await buildAab({ manifest: manifest({ versionName: '2.0.0' }) }));
    expect(r.findings).toEqual([]);
    expect(r.target).toEqual({ name: 'com.example.app', version: '2.0.0', versionCode: 7 });
  });

  it('reads manifest flags and components from the protobuf manifest', async () => {
    const r = await scan(await buildAab({
      manifest: manifest({ minSdk: 19, targetSdk: 30, application: { 'android:debuggable': 'true' }, body: '<receiver android:name=".Boot" android:exported="true"/>' }),
    }));
    expect(ids(r).sort()).toEqual(['android.debuggable', 'android.exported-receiver', 'android.min-sdk', 'android.target-sdk']);
    expect(only(r, 'android.min-sdk').detail).toContain('minSdkVersion is 19');
  });

  it('finds the network security config, also under another file name', async () => {
    for (const name of [undefined, 'net_rules']) {
      const r = await scan(await buildAab({
        manifest: manifest({ application: { 'android:networkSecurityConfig': `@xml/${name ?? 'network_security_config'}` } }),
        networkSecurityConfig: '<network-security-config><base-config cleartextTrafficPermitted="true"/></network-security-config>',
        networkSecurityConfigName: name,
      }));
      expect(only(r, 'android.nsc-cleartext').detail).toContain(`base/res/xml/${name ?? 'network_security_config'}.xml`);
    }
  });

  it('checks the jarsigner certificate and reports a missing signature', async () => {
    expect(ids(await scan(await buildAab({ manifest: manifest(), sign: 'debug' })))).toEqual(['android.debug-certificate']);
    expect(only(await scan(await buildAab({ manifest: manifest(), sign: 'none' })), 'android.unsigned').title).toContain('App Bundle');
  });
});
