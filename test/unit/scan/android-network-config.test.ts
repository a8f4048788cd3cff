// Protects: network security config findings (cleartext base/domain, user CAs, overridePins, debug-overrides),
// reference resolution through resources.arsc for a non-conventional file name, and cleartext precedence.
import { buildApk, cleanupFixtures } from '../../fixtures/build-packages';
import { ids, manifest, only, scan } from './helpers';

jest.setTimeout(120_000);
afterAll(cleanupFixtures);

const withConfig = async (config: string, opts: { name?: string; application?: Record<string, string>; minSdk?: number } = {}) => {
  const ref = `@xml/${opts.name ?? 'network_security_config'}`;
  return scan(await buildApk({
    manifest: manifest({ minSdk: opts.minSdk ?? 26, application: { 'android:networkSecurityConfig': ref, ...opts.application } }),
    networkSecurityConfig: config,
    networkSecurityConfigName: opts.name,
    sign: 'none',
  }));
};
const xml = (body: string) => `<?xml version="1.0" encoding="utf-8"?>\n<network-security-config>${body}</network-security-config>`;
const SAFE = xml('<base-config cleartextTrafficPermitted="false"><trust-anchors><certificates src="system"/></trust-anchors></base-config>');

describe('network security config', () => {
  it('reports nothing for a strict config', async () => {
    expect(ids(await withConfig(SAFE))).toEqual(['android.unsigned']);
  });

  it('flags cleartext in base-config', async () => {
    const f = only(await withConfig(xml('<base-config cleartextTrafficPermitted="true"/>')), 'android.nsc-cleartext');
    expect(f.severity).toBe('high');
    expect(f.detail).toContain('res/xml/network_security_config.xml');
  });

  it('flags cleartext for named domains', async () => {
    const r = await withConfig(xml('<domain-config cleartextTrafficPermitted="true"><domain includeSubdomains="true">legacy.example.com</domain></domain-config>'));
    expect(only(r, 'android.nsc-cleartext-domain').detail).toContain('legacy.example.com (and subdomains)');
    expect(ids(r)).not.toContain('android.nsc-cleartext');
  });

  it('flags user CAs in production trust anchors, not inside debug-overrides of a release build', async () => {
    const r = await withConfig(xml('<domain-config><domain>api.example.com</domain><trust-anchors><certificates src="user"/></trust-anchors></domain-config>'));
    expect(only(r, 'android.nsc-user-certificates').detail).toContain('api.example.com');
    const debugOnly = await withConfig(xml('<debug-overrides><trust-anchors><certificates src="user"/></trust-anchors></debug-overrides>'));
    expect(ids(debugOnly)).not.toContain('android.nsc-user-certificates');
    expect(only(debugOnly, 'android.nsc-debug-overrides').severity).toBe('low');
  });

  it('rates debug-overrides high when the app is debuggable', async () => {
    const r = await withConfig(xml('<debug-overrides><trust-anchors><certificates src="user"/></trust-anchors></debug-overrides>'), { application: { 'android:debuggable': 'true' } });
    expect(only(r, 'android.nsc-debug-overrides').severity).toBe('high');
  });

  it('flags overridePins', async () => {
    const r = await withConfig(xml('<base-config><trust-anchors><certificates src="system" overridePins="true"/></trust-anchors></base-config>'));
    expect(only(r, 'android.nsc-override-pins').detail).toContain('overridePins="true"');
  });

  it('resolves a config with another file name through resources.arsc', async () => {
    const r = await withConfig(xml('<base-config cleartextTrafficPermitted="true"/>'), { name: 'net_rules' });
    expect(only(r, 'android.nsc-cleartext').detail).toContain('res/xml/net_rules.xml');
  });

  it('lets the config decide cleartext on API 24+, but still flags usesCleartextTraffic for older devices', async () => {
    const modern = await withConfig(SAFE, { application: { 'android:usesCleartextTraffic': 'true' } });
    expect(ids(modern)).not.toContain('android.cleartext-traffic');
    const old = await withConfig(SAFE, { minSdk: 23, application: { 'android:usesCleartextTraffic': 'true' } });
    expect(only(old, 'android.cleartext-traffic').severity).toBe('medium');
  });
});
