// Protects: every text a static analysis returns passes through the secret redaction (src/scan/static/secrets/
// redact.ts): a value of each kind the rules know is cut to what a finding may show wherever it sits in a text, a
// placeholder or an ordinary word is left alone, and an APK that writes tokens into its versionName, a provider's
// authority and a file name yields an analysis in which none of them is whole.
import { redactDeep, redactSecrets } from '../../../src/scan/static/secrets/redact';
import { buildSecretApk, cleanupSecretPackages, freshSecrets, pemBody } from '../../fixtures/secret-packages';
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
