// Protects: a secret found in a package never leaves the service whole (docs/scan-evidence.md, "Secrets"). Fresh
// secrets of every kind the rules know are planted in an APK (DEX strings, resource strings, res/raw, assets), the
// package goes through the real service (upload, static scan job), and every output that carries a scan is read: the
// REST scan, build and SBOM, GraphQL (the console's own BuildFindings document, which is what the console shows),
// the audit trail, the scan.completed webhook as a receiver gets it, the SARIF the CI client writes, and every log
// line at the most verbose level. Secrets are also planted where the package describes itself (versionName, an
// exported provider's authority, an asset's file name), which outputs quote outside any secret finding. None holds
// a planted value's first 5 characters or any 8 characters of it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { print } from 'graphql';
import { startHarness, bearer, json, readJson, type Harness } from '../support/harness';
import { buildSecretApk, cleanupSecretPackages, freshSecrets, pemBody } from '../fixtures/secret-packages';
import { BuildFindingsDocument } from '../../src/generated/console-operations';
import { WebhookWorker } from '../../src/webhooks/delivery-worker';
import { toSarif } from '../../client/src/sarif';
import { getScan, uploadPackage } from './scans-support';

const s = freshSecrets();
/** Planted where the manifest and file names are quoted: the target's version, a provider finding, a file name. */
const described = freshSecrets();
const serviceAccount = JSON.stringify({ type: 'service_account', project_id: 'demo', private_key: s.serviceAccountPem, client_email: 'svc@demo.iam.gserviceaccount.com' });
/** Every planted value, as no output may hold it (for a PEM, its base64 body). */
const PLANTED: Record<string, string> = {
  awsId: s.awsId.slice(4), awsSecret: s.awsSecret, awsSecret2: s.awsSecret2, google: s.google, stripe: s.stripe,
  stripeRestricted: s.stripeRestricted, slackBot: s.slackBot, slackWebhook: s.slackWebhookPath, github: s.github,
  // The issuer's prefix says only what kind of token it is (and a rule id holds "github"): the value is what follows.
  githubPat: s.githubPat.slice('github_pat_'.length), rsaPem: pemBody(s.rsaPem), serviceAccount: pemBody(s.serviceAccountPem),
  versionName: described.github.slice(4), authority: described.stripe.slice(8), fileName: described.slackBot.slice(5),
};
const MANIFEST = `<manifest xmlns:android="http://schemas.android.com/apk/res/android" package="com.example.secrets" android:versionName="${described.github}">
  <application android:label="Secrets" android:allowBackup="false">
    <provider android:name=".Data" android:exported="true" android:authorities="com.example.${described.stripe}"/>
  </application>
</manifest>
`;

let h: Harness;
const logs: string[] = [];
let receiver: http.Server;
const received: string[] = [];

beforeAll(async () => {
  h = await startHarness({ jobs: false, env: { LOG_LEVEL: 'trace', WEBHOOK_ALLOW_INSECURE_LOOPBACK: '1' }, logTo: { write: (line) => void logs.push(line) } });
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  await h.close();
  receiver.closeAllConnections();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
  await cleanupSecretPackages();
});

/** Where a planted value shows: its first 5 characters, or any 8 consecutive ones. Null when it is nowhere. */
function leak(text: string): string | null {
  for (const [name, value] of Object.entries(PLANTED)) {
    if (text.includes(value.slice(0, 5))) return `${name} (its first 5 characters)`;
    for (let i = 0; i + 8 <= value.length; i++) if (text.includes(value.slice(i, i + 8))) return `${name} (8 characters at ${i})`;
  }
  return null;
}

it('finds every planted secret and shows none of them whole in any output', async () => {
  const appId = (await h.newApp('scale')).appId;
  const key = (await h.newKey(appId, ['builds:write', 'builds:read', 'scans:read', 'rules:read', 'rules:write'])).key;
  const admin = await h.newStaff('admin');
  const port = (receiver.address() as AddressInfo).port;
  const hook = await h.api(`/v1/apps/${appId}/webhooks`, { method: 'POST', headers: json(key), body: JSON.stringify({ url: `http://127.0.0.1:${port}/hooks`, events: ['scan.completed'], gradeBelow: 'A+' }) });
  expect(hook.status).toBe(201);

  const apk = await buildSecretApk({
    dex: [['Stripe key:', s.stripe, s.awsId, s.awsSecret, s.google, `token ${s.github}`], [s.stripeRestricted]],
    strings: { app_name: 'Secrets', slack_token: s.slackBot },
    raw: { 'signing_key.pem': s.rsaPem },
    assets: {
      'config/aws.json': JSON.stringify({ accessKeyId: s.awsTempId, secretAccessKey: s.awsSecret2, slack: `https://hooks.slack.com/services/${s.slackWebhookPath}`, github: s.githubPat }),
      'firebase/service-account.json': serviceAccount,
      [`tokens/${described.slackBot}.txt`]: 'not a secret in itself',
    },
    manifest: MANIFEST,
  });
  const build = await uploadPackage(h, key, apk, 'android');
  expect(await h.jobs.runDue()).toBe(true);
  const readBuild = await h.api(`/v1/builds/${build.id}`, { headers: bearer(key) });
  const buildText = await readBuild.text();
  const scanId = JSON.parse(buildText).scans.find((x: { engine: string }) => x.engine === 'static').id;
  const scan = (await getScan(h, key, scanId)).body;

  // The rules fired: the outputs below are checked with the findings in them.
  const ids = scan.findings.map((f: { id: string }) => f.id);
  for (const rule of ['aws', 'google-api-key', 'private-key', 'stripe', 'slack', 'github']) expect(ids).toContain(`package.secret-${rule}`);
  // The package's description was read, with its planted values cut to what may be shown.
  expect(scan.target.version).toBe('ghp_…');
  expect(scan.findings.find((f: { id: string }) => f.id === 'android.exported-provider').detail).toContain('content://com.example.sk_l…');

  const outputs: Record<string, string> = {
    'REST scan': JSON.stringify(scan),
    'REST build': buildText,
    'REST SBOM': await (await h.api(`/v1/scans/${scanId}/sbom`, { headers: bearer(key) })).text(),
    'GraphQL (the console\'s BuildFindings)': await (await h.api('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(admin) }, body: JSON.stringify({ query: print(BuildFindingsDocument), variables: { scanId } }) })).text(),
    'REST audit trail': await (await h.api(`/v1/apps/${appId}/audit-events`, { headers: bearer(key) })).text(),
    SARIF: JSON.stringify(toSarif(scan, { manifestPath: 'app/src/main/AndroidManifest.xml', toolVersion: '1.0.0', informationUri: 'https://shieldgate.example.com' })),
  };
  const worker = new WebhookWorker({ repos: h.deps.repos, clock: h.clock, logger: h.deps.logger, config: h.deps.config });
  expect(await worker.runDue()).toBe(1);
  expect(received).toHaveLength(1);
  outputs['scan.completed webhook'] = received[0];
  outputs.logs = logs.join('');

  expect(JSON.parse(outputs['GraphQL (the console\'s BuildFindings)']).data.scan.findings.length).toBe(scan.findings.length);
  // The logs were captured: the scan job and every request above wrote lines.
  expect(outputs.logs).toContain("scan job done");
  for (const operation of ["getScan", "getScanSbom", "listAuditEvents"]) expect(outputs.logs).toContain(`"operation":"${operation}"`);
  for (const [name, text] of Object.entries(outputs)) expect({ output: name, leak: leak(text) }).toEqual({ output: name, leak: null });
  // What may be shown: the AWS key id's prefix, and at most 4 characters of the others.
  expect(scan.findings.find((f: { id: string }) => f.id === 'package.secret-aws').detail).toContain('AKIA…');
});
