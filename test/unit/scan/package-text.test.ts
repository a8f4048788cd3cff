// Protects: text the package names itself with (the scan target's name and version, from CFBundleIdentifier and
// CFBundleShortVersionString here; the manifest's package and versionName on Android) and text findings quote reach
// the scan without control characters, bidirectional overrides and isolates, zero-width or byte-order marks and
// lone surrogates, and a clipped text never ends in half a surrogate pair.
import { cleanupFixtures, writeRawFile } from '../../fixtures/build-packages';
import { storedZip } from './craft';
import { only, scan } from './helpers';

afterAll(cleanupFixtures);

/** Characters that must not reach a scan from package text; with the u flag, only lone surrogates match D800-DFFF. */
const HIDDEN = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff]/u;

/** An IPA of one XML Info.plist; `id`, `version` and `domain` are XML text (character references allowed). */
async function ipa(id: string, version: string, domain = 'x.example'): Promise<string> {
  const xml = `<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict>
    <key>CFBundleIdentifier</key><string>${id}</string>
    <key>CFBundleShortVersionString</key><string>${version}</string>
    <key>NSAppTransportSecurity</key><dict><key>NSExceptionDomains</key><dict>
      <key>${domain}</key><dict><key>NSExceptionAllowsInsecureHTTPLoads</key><true/></dict>
    </dict></dict>
  </dict></plist>`;
  return writeRawFile('app.ipa', storedZip([['Payload/Example.app/Info.plist', Buffer.from(xml)]]));
}

describe('scan target', () => {
  it('drops controls, bidi overrides and isolates, zero-width and byte-order marks from the name and version', async () => {
    const r = await scan(await ipa('com.example.\u202eppa\u0000.&#x200b;x&#xfeff;', '1.0\u2066&#x61c;&#x200f;.2'), 'ios');
    expect(r.target.name).not.toMatch(HIDDEN);
    expect(r.target.version).not.toMatch(HIDDEN);
    expect(r.target.name).toMatch(/^com\.example\. ppa \. x $/);
    expect(r.target.version).toBe('1.0   .2');
  });

  it('drops a lone surrogate the package wrote as a character reference', async () => {
    const r = await scan(await ipa('com.example.&#xd800;app', '&#xdfff;1.0'), 'ios');
    expect(r.target).toEqual({ name: 'com.example. app', version: ' 1.0', versionCode: null });
  });

  it('clips the name, the version and a finding title between code points, never inside a surrogate pair', async () => {
    // Clipped at 256, 64 and 200 UTF-16 units, each text has a pair across the cut: 'a' x 254 + pairs puts the
    // 255th unit (the last one kept before the ellipsis) on a high surrogate.
    const domain = `${'a'.repeat(200 - 1 - 'Plain HTTP allowed for '.length - 1)}${'\u{1f600}'.repeat(20)}`;
    const r = await scan(await ipa(`${'a'.repeat(254)}${'\u{1f600}'.repeat(5)}`, `${'v'.repeat(62)}${'\u{1f600}'.repeat(5)}`, domain), 'ios');
    const title = only(r, 'ios.ats-insecure-http-domain').title;
    for (const [text, max] of [[r.target.name, 256], [r.target.version ?? '', 64], [title, 200]] as const) {
      expect(text).not.toMatch(HIDDEN);
      expect(text.length).toBeLessThanOrEqual(max);
      expect(text.endsWith('\u2026')).toBe(true);
    }
    expect(r.target.name).toBe(`${'a'.repeat(254)}\u2026`);
  });
});
