// Each secret rule fires on a secret planted fresh in a real package (aapt, smali, plistutil), naming the file it
// is in, and no finding holds more than 4 characters of any planted value; a decoy package of placeholders,
// publishable and test keys and Firebase configuration gets no finding.
import type { Finding } from '../../../src/scan/model/types';
import { PackageZip } from '../../../src/scan/static/package/zip-reader';
import { isIosSecretEntry, scanIosSecrets } from '../../../src/scan/static/ios/ios-secrets';
import { buildSecretApk, buildSecretIpa, cleanupSecretPackages, freshSecrets, pemBody, scanApkContents, type Planted } from '../../fixtures/secret-packages';

jest.setTimeout(240_000);
afterAll(cleanupSecretPackages);

const s = freshSecrets();

const scanApk = scanApkContents;

async function scanIpa(file: string): Promise<Finding[]> {
  const zip = await PackageZip.open(file, isIosSecretEntry);
  try {
    return await scanIosSecrets(zip, 'Payload/Demo.app/');
  } finally {
    zip.close();
  }
}

/** The value's first 5 characters and every 8-character window of it are nowhere in the findings. */
function expectNoLeak(findings: Finding[], planted: Planted[]): void {
  const json = JSON.stringify(findings);
  for (const p of planted) {
    expect(json).not.toContain(p.value.slice(0, 5));
    for (let i = 0; i + 8 <= p.value.length; i++) if (json.includes(p.value.slice(i, i + 8))) throw new Error(`${p.rule}: finding holds "${p.value.slice(i, i + 2)}…" of the planted value at ${i}`);
  }
}

function expectPlanted(findings: Finding[], planted: Planted[]): void {
  for (const p of planted) {
    const f = findings.find((x) => x.id === p.rule);
    if (!f) throw new Error(`${p.rule} did not fire (planted in ${p.file}); got ${findings.map((x) => x.id).join(', ')}`);
    expect(f.severity).toBe('high');
    expect(f.detail).toContain(p.file);
    expect(f.fix.length).toBeGreaterThan(40);
  }
  // One finding per rule, whatever the number of files.
  expect(new Set(findings.map((f) => f.id)).size).toBe(findings.length);
}

describe('secrets planted in an APK', () => {
  const serviceAccount = JSON.stringify({ type: 'service_account', project_id: 'demo', private_key_id: 'k1', private_key: s.serviceAccountPem, client_email: 'svc@demo.iam.gserviceaccount.com' }, null, 2);
  const planted: Planted[] = [
    { rule: 'package.secret-aws', file: 'classes.dex', value: s.awsSecret },
    { rule: 'package.secret-aws', file: 'classes.dex', value: s.awsId.slice(4) },
    { rule: 'package.secret-google-api-key', file: 'classes.dex', value: s.google },
    { rule: 'package.secret-stripe', file: 'classes.dex', value: s.stripe },
    { rule: 'package.secret-stripe', file: 'classes2.dex', value: s.stripeRestricted },
    { rule: 'package.secret-github', file: 'classes.dex', value: s.github },
    { rule: 'package.secret-slack', file: 'resources.arsc', value: s.slackBot },
    { rule: 'package.secret-private-key', file: 'res/raw/signing_key.pem', value: pemBody(s.rsaPem) },
    { rule: 'package.secret-private-key', file: 'assets/firebase/service-account.json', value: pemBody(s.serviceAccountPem) },
    { rule: 'package.secret-aws', file: 'assets/config/aws.json', value: s.awsSecret2 },
    { rule: 'package.secret-slack', file: 'assets/config/aws.json', value: s.slackWebhookPath },
    // The issuer's fixed prefix says only what kind of token it is (and the rule id holds "github"): the value is what follows.
    { rule: 'package.secret-github', file: 'assets/config/aws.json', value: s.githubPat.slice('github_pat_'.length) },
  ];
  let result: Awaited<ReturnType<typeof scanApk>>;
  beforeAll(async () => {
    const apk = await buildSecretApk({
      // The AWS secret comes before its key id in the sorted string table: the pair is found in either order.
      dex: [['Stripe key:', s.stripe, s.awsId, s.awsSecret, s.google, `token ${s.github}`], [s.stripeRestricted]],
      strings: { app_name: 'Secrets', slack_token: s.slackBot, google_api_key: s.google.slice(0, 4) + s.google.slice(4).split('').reverse().join('') },
      raw: { 'signing_key.pem': s.rsaPem },
      assets: {
        'config/aws.json': JSON.stringify({ region: 'eu-west-1', accessKeyId: s.awsTempId, secretAccessKey: s.awsSecret2, slack: `https://hooks.slack.com/services/${s.slackWebhookPath}`, github: s.githubPat }),
        'firebase/service-account.json': serviceAccount,
        // Binary by name: never opened, so what it holds is not reported.
        'icon.png': Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0]), Buffer.from(freshSecrets().github)]),
      },
    });
    result = await scanApk(apk);
  });

  test('every rule fires, naming each file its secret is in', () => {
    expectPlanted(result.findings, planted);
    expect(result.findings.map((f) => f.id).sort()).toEqual([
      'package.secret-aws', 'package.secret-github', 'package.secret-google-api-key', 'package.secret-private-key', 'package.secret-slack', 'package.secret-stripe',
    ]);
    expect(result.findings.find((f) => f.id === 'package.secret-private-key')!.detail).toMatch(/RSA PRIVATE KEY/);
    expect(JSON.stringify(result.findings)).not.toContain('icon.png');
  });

  test('no finding holds more than 4 characters of a value, and the AWS secret not at all', () => {
    expectNoLeak(result.findings, planted);
    const aws = result.findings.find((f) => f.id === 'package.secret-aws')!;
    expect(aws.detail).toContain('AKIA…');
    expect(aws.detail).toContain('ASIA…');
    expect(aws.detail).not.toContain(s.awsSecret.slice(0, 4));
  });

  test('the Java packages of the DEX type descriptors', () => {
    // The classes' own packages and that of their superclass (java.lang.Object).
    expect(result.dexTypePackages).toEqual(['com.example.secrets', 'com.google.firebase.analytics', 'java.lang']);
  });
});

describe('secrets planted in an IPA', () => {
  const planted: Planted[] = [
    { rule: 'package.secret-stripe', file: 'Payload/Demo.app/Info.plist', value: s.stripe },
    { rule: 'package.secret-aws', file: 'Payload/Demo.app/config.json', value: s.awsSecret },
    { rule: 'package.secret-slack', file: 'Payload/Demo.app/en.lproj/Localizable.strings', value: s.slackUser },
    { rule: 'package.secret-private-key', file: 'Payload/Demo.app/Frameworks/Sdk.framework/keys.plist', value: pemBody(s.ecPem) },
    { rule: 'package.secret-google-api-key', file: 'Payload/Demo.app/Frameworks/Sdk.framework/keys.plist', value: s.google },
    { rule: 'package.secret-github', file: 'Payload/Demo.app/Settings.bundle/Root.plist', value: s.github },
  ];
  let findings: Finding[];
  beforeAll(async () => {
    const ipa = await buildSecretIpa({
      'Info.plist': { plist: { CFBundleIdentifier: 'com.example.demo', StripeKey: s.stripe }, binary: true },
      'config.json': JSON.stringify({ aws: { id: s.awsId, secret: s.awsSecret } }),
      'en.lproj/Localizable.strings': Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`"slack" = "${s.slackUser}";\n`, 'utf16le')]),
      'Frameworks/Sdk.framework/keys.plist': { plist: { key: s.ecPem, maps: s.google }, binary: false },
      'Settings.bundle/Root.plist': { plist: { PreferenceSpecifiers: [{ DefaultValue: Buffer.from(s.github) }] }, binary: true },
      // Firebase's own configuration: its API_KEY is made to ship, not reported.
      'GoogleService-Info.plist': { plist: { API_KEY: freshSecrets().google, GOOGLE_APP_ID: '1:1234567890:ios:abcdef' }, binary: false },
    });
    findings = await scanIpa(ipa);
  });

  test('every rule fires, naming each file its secret is in', () => {
    expectPlanted(findings, planted);
    expect(findings.map((f) => f.detail).join('\n')).not.toContain('GoogleService-Info.plist');
  });

  test('no finding holds more than 4 characters of a value', () => {
    expectNoLeak(findings, planted);
  });
});

describe('a decoy APK: nothing that looks like a secret but is not one is reported', () => {
  test('placeholders, publishable and test keys, Firebase configuration, an AWS key id alone', async () => {
    const fake = freshSecrets();
    const apk = await buildSecretApk({
      dex: [[
        'AKIAIOSFODNN7EXAMPLE', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
        `pk_live_${fake.stripe.slice(8)}`, `sk_test_${fake.stripe.slice(8)}`, 'sk_live_xxxxxxxxxxxxxxxxxxxxxxxx',
        `ghp_${'a'.repeat(36)}`, `ghp_${fake.github.slice(4)}X`, fake.awsTempId, 'AIzaXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX',
      ]],
      strings: { google_api_key: fake.google, google_crash_reporting_api_key: fake.google, gcm_defaultSenderId: '1234567890' },
      assets: {
        'README.txt': '-----BEGIN RSA PRIVATE KEY-----\n...your key here...\n-----END RSA PRIVATE KEY-----\nxoxb-000000000000-000000000000-xxxxxxxxxxxxxxxxxxxxxxxx\n',
        'id-only.txt': fake.awsId,
        'secret-only.txt': fake.awsSecret,
      },
    });
    const result = await scanApk(apk);
    expect(result.findings).toEqual([]);
  });
});
