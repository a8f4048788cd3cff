// Protects: Info.plist rules read from XML and binary (plistutil) plists: ATS arbitrary loads (global,
// web, media, iOS 9-only case), per-domain insecure HTTP / weak TLS / no forward secrecy, MinimumOSVersion,
// custom URL schemes and file sharing; a safe IPA has no findings.
import { buildIpa, cleanupFixtures } from '../../fixtures/build-packages';
import { ids, only, scan } from './helpers';

jest.setTimeout(120_000);
afterAll(cleanupFixtures);

const BASE = { CFBundleIdentifier: 'com.example.app', CFBundleShortVersionString: '4.2.0', CFBundleVersion: '420', MinimumOSVersion: '16.0' };
const ipa = async (extra: Record<string, unknown>, binary = true) => scan(await buildIpa({ infoPlist: { ...BASE, ...extra }, binary }), 'ios');

describe.each([true, false])('Info.plist (binary: %s)', (binary) => {
  it('finds nothing in a safe app and names its target', async () => {
    const r = await ipa({}, binary);
    expect(r.findings).toEqual([]);
    expect(r.target).toEqual({ name: 'com.example.app', version: '4.2.0', versionCode: null });
  });

  it('flags NSAllowsArbitraryLoads and not NSAllowsArbitraryLoads = false', async () => {
    expect(only(await ipa({ NSAppTransportSecurity: { NSAllowsArbitraryLoads: true } }, binary), 'ios.ats-arbitrary-loads').severity).toBe('high');
    expect(ids(await ipa({ NSAppTransportSecurity: { NSAllowsArbitraryLoads: false } }, binary))).toEqual([]);
  });
});

describe('App Transport Security details', () => {
  it('notes that iOS 10+ ignores NSAllowsArbitraryLoads next to narrower keys', async () => {
    const r = await ipa({ NSAppTransportSecurity: { NSAllowsArbitraryLoads: true, NSAllowsArbitraryLoadsInWebContent: true } });
    expect(only(r, 'ios.ats-arbitrary-loads')).toMatchObject({ severity: 'medium' });
    expect(only(r, 'ios.ats-arbitrary-loads').detail).toContain('iOS 10+ ignores it');
    expect(only(r, 'ios.ats-arbitrary-loads-web').severity).toBe('medium');
  });

  it('flags arbitrary loads for media', async () => {
    expect(ids(await ipa({ NSAppTransportSecurity: { NSAllowsArbitraryLoadsForMedia: true } }))).toEqual(['ios.ats-arbitrary-loads-media']);
  });

  it('quotes a domain as one line of printable text, whatever control or bidi characters the package put in it', async () => {
    const r = await ipa({ NSAppTransportSecurity: { NSExceptionDomains: { 'x.example\n::error::fake\r\u202egro.elpmaxe': { NSExceptionAllowsInsecureHTTPLoads: true } } } }, false);
    const f = only(r, 'ios.ats-insecure-http-domain');
    for (const text of [f.title, f.fix]) expect(text).not.toMatch(/[\u0000-\u001f\u202a-\u202e]/);
    expect(f.title).toContain('x.example ::error::fake');
  });

  it('names the domain with insecure HTTP, weak TLS or no forward secrecy', async () => {
    const r = await ipa({ NSAppTransportSecurity: { NSExceptionDomains: {
      'legacy.example.com': { NSExceptionAllowsInsecureHTTPLoads: true, NSIncludesSubdomains: true },
      'old-tls.example.com': { NSExceptionMinimumTLSVersion: 'TLSv1.0', NSExceptionRequiresForwardSecrecy: false },
      'fine.example.com': { NSExceptionMinimumTLSVersion: 'TLSv1.2' },
    } } });
    expect(only(r, 'ios.ats-insecure-http-domain').detail).toContain('legacy.example.com and its subdomains');
    expect(only(r, 'ios.ats-weak-tls-domain').detail).toContain('old-tls.example.com › NSExceptionMinimumTLSVersion = TLSv1.0');
    expect(only(r, 'ios.ats-no-forward-secrecy').detail).toContain('old-tls.example.com');
    expect(r.findings.some((f) => f.detail.includes('fine.example.com'))).toBe(false);
  });
});

describe('bundle settings', () => {
  it('rates MinimumOSVersion < 12 high, < 15 medium and 15 clean', async () => {
    expect(only(await ipa({ MinimumOSVersion: '11.4' }), 'ios.minimum-os').severity).toBe('high');
    expect(only(await ipa({ MinimumOSVersion: '14.0' }), 'ios.minimum-os').detail).toContain('MinimumOSVersion is 14.0');
    expect(ids(await ipa({ MinimumOSVersion: '15.0' }))).toEqual([]);
  });

  it('flags custom URL schemes, medium when one looks like a login callback', async () => {
    const plain = only(await ipa({ CFBundleURLTypes: [{ CFBundleURLName: 'links', CFBundleURLSchemes: ['exampleapp'] }] }), 'ios.custom-url-scheme');
    expect(plain).toMatchObject({ severity: 'low' });
    expect(plain.detail).toContain('exampleapp://');
    expect(plain.fix).toContain('universal links');
    const auth = only(await ipa({ CFBundleURLTypes: [{ CFBundleURLSchemes: ['com.googleusercontent.apps.1234-abcd'] }] }), 'ios.custom-url-scheme');
    expect(auth.severity).toBe('medium');
  });

  it('flags UIFileSharingEnabled', async () => {
    expect(ids(await ipa({ UIFileSharingEnabled: true }))).toEqual(['ios.file-sharing']);
    expect(ids(await ipa({ UIFileSharingEnabled: false }))).toEqual([]);
  });
});
