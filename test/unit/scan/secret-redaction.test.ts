// Protects: every text a static analysis returns passes through the secret redaction (src/scan/static/secrets/
// redact.ts): a value of each kind the rules know is cut to what a finding may show wherever it sits in a text, a
// placeholder or an ordinary word is left alone, and an APK that writes tokens into its versionName, a provider's
// authority and a file name yields an analysis in which none of them is whole. The search's work follows the text
// there is: a plist string referenced many times is searched once, a megabyte of PEM headers is one linear pass.
import { redactDeep, redactSecrets } from '../../../src/scan/static/secrets/redact';
import { isIosSecretEntry, scanIosSecrets } from '../../../src/scan/static/ios/ios-secrets';
import { PackageZip } from '../../../src/scan/static/package/zip-reader';
import { SecretCollector } from '../../../src/scan/static/secrets/collector';
import { buildSecretApk, buildSecretIpa, cleanupSecretPackages, freshSecrets, pemBody } from '../../fixtures/secret-packages';
import { binaryPlist, bplistArea, bplistCollection, bplistMarker } from './craft';
import { scan } from './helpers';

jest.setTimeout(120_000);
afterAll(cleanupSecretPackages);

const s = freshSecrets();

describe('redactSecrets', () => {
  test.each([
    ['GitHub token', s.github, 'ghp_…'],
    ['fine-grained GitHub token', s.githubPat, 'gith…'],
    ['Stripe key', s.stripe, 'sk_l…'],
    ['Slack token', s.slackBot, 'xoxb…'],
    ['Google API key', s.google, 'AIza…'],
    ['AWS key id', s.awsId, 'AKIA…'],
    ['AWS secret key', s.awsSecret, '…'],
  ])('cuts a %s inside a text to what may be shown', (_kind, value, shown) => {
    expect(redactSecrets(`version 1.0 (${value}) built`)).toBe(`version 1.0 (${shown}) built`);
  });

  test('cuts a PEM private key to its armour', () => {
    const out = redactSecrets(`key: ${s.rsaPem}`);
    expect(out).not.toContain(pemBody(s.rsaPem).slice(0, 16));
    expect(out).toContain('RSA PRIVATE KEY');
  });

  test('leaves placeholders, digests and ordinary text alone', () => {
    for (const text of ['ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx', 'sha256 ' + 'ab12'.repeat(16), 'com.example.app 1.2.3-rc1 (build 4711)']) {
      expect(redactSecrets(text)).toBe(text);
    }
  });

  test('walks objects and arrays, keeping other values', () => {
    const at = new Date(0);
    expect(redactDeep({ a: [s.github, 1, null], b: { c: `x ${s.stripe}` }, at })).toEqual({ a: ['ghp_…', 1, null], b: { c: 'x sk_l…' }, at });
  });
});

test('an APK whose manifest and file names hold tokens yields an analysis with none of them whole', async () => {
  const d = freshSecrets();
  const manifest = `<manifest xmlns:android="http://schemas.android.com/apk/res/android" package="com.example.secrets" android:versionName="${d.github}">
  <application android:label="Secrets" android:allowBackup="false">
    <provider android:name=".Data" android:exported="true" android:authorities="com.example.${d.stripe}"/>
  </application>
</manifest>
`;
  const apk = await buildSecretApk({ dex: [['nothing here']], assets: { [`t/${d.slackBot}.txt`]: 'x' }, manifest });
  const r = await scan(apk);
  const text = JSON.stringify(r);
  for (const value of [d.github.slice(4), d.stripe.slice(8), d.slackBot.slice(5)]) expect(text).not.toContain(value.slice(0, 8));
  expect(r.target.version).toBe('ghp_…');
  expect(r.findings.find((f) => f.id === 'android.exported-provider')?.detail).toContain('content://com.example.sk_l…');
});

describe('secret search work is bounded by what is there, not by how it is referenced or repeated', () => {
  test('a plist string referenced 60,000 times is searched once: its secret is found, the scan is not cut short', async () => {
    const token = freshSecrets().github;
    const text = Buffer.from(`${'x'.repeat(64 * 1024)} ${token}`, 'latin1');
    const top = bplistCollection(0xa, Array.from({ length: 60_000 }, () => 1));
    const leaf = Buffer.concat([bplistMarker(0x5, text.length), text]);
    const { area, starts } = bplistArea([top, leaf]);
    const ipa = await buildSecretIpa({ 'Config.plist': binaryPlist(area, starts) });
    const zip = await PackageZip.open(ipa, isIosSecretEntry);
    try {
      // Searched once per reference, the 60,000 copies (3.9 GB of text) would pass the text cap and stop the scan.
      const findings = await scanIosSecrets(zip, 'Payload/Demo.app/');
      expect(findings.find((f) => f.id === 'package.secret-github')?.detail).toContain('Config.plist (ghp_…)');
    } finally {
      zip.close();
    }
  });

  test('a megabyte of PEM headers and one key after them is one private-key finding', () => {
    const key = freshSecrets().rsaPem;
    const collector = new SecretCollector();
    collector.scan('key.pem', '-----BEGIN RSA PRIVATE KEY-----\n'.repeat(32 * 1024) + key);
    expect(collector.findings().map((f) => [f.id, f.detail])).toEqual([['package.secret-private-key', expect.stringContaining('key.pem (RSA PRIVATE KEY)')]]);
    const only = new SecretCollector();
    only.scan('headers.pem', '-----BEGIN RSA PRIVATE KEY-----\n'.repeat(32 * 1024));
    expect(only.findings()).toEqual([]);
  });
});
