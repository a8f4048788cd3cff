/**
 * The data the console tests look at, made the way production makes it: builds registered and real APKs (aapt,
 * apksigner) uploaded over REST and scanned by the job runner, security events ingested over REST with a device
 * key, OIDC exchanges refused by the real exchange with GitHub-shaped tokens, keys and staff made by the services the
 * CLI runs.
 */
import { createHash, randomInt } from 'node:crypto';
import type { Harness } from '../support/harness';
import { json } from '../support/harness';
import type { OidcIssuer, PathIssuer } from '../support/oidc-issuer';
import { gitlabClaims, GITLAB_HEADER } from '../fixtures/oidc/gitlab';
import { androidManifest, buildApk } from '../fixtures/build-packages';
import { registerBuild, uploadPackage, waitForStaticScan } from '../integration/scans-support';
import { createApp } from '../../src/services/apps-service';
import { createApiKey } from '../../src/services/keys-service';
import { operatorContext } from '../../src/services/operator-context';
import { riskyManifest, seedBaselines, type SeededBaselines } from './seed-baselines';

export interface Seeded {
  appId: string;
  quietAppId: string;
  builds: { risky: string; clean: string; pending: string };
  /** Later builds of the risky package and the app's suppressions. */
  baselines: SeededBaselines;
  nightlyKey: { id: string; key: string };
  ciKey: { id: string; key: string };
}

const DAY = 86_400_000;
/** Builds registered before the graded ones: with the three below, two pages of the builds view and a bit. */
export const HISTORY_BUILDS = 30;
const DETECTIONS = ['hooking', 'root_jailbreak', 'emulator', 'debugger'] as const;

async function post(h: Harness, path: string, key: string, body: unknown): Promise<Response> {
  return h.api(path, { method: 'POST', headers: json(key), body: JSON.stringify(body) });
}

export async function seed(h: Harness, issuer: OidcIssuer, gitlab: PathIssuer): Promise<Seeded> {
  const app = await createApp(operatorContext(h.deps), { name: 'Acme Banking', plan: 'scale', org: 'acme' });
  const quiet = await createApp(operatorContext(h.deps), { name: 'Quiet Notes', plan: 'indie', org: 'quiet' });
  const appId = app._id;
  const ci = await createApiKey(operatorContext(h.deps), { appId, scopes: ['builds:write', 'builds:read', 'scans:read'], mode: 'live', name: 'Release CI', releaseBuilds: true });
  const device = await createApiKey(operatorContext(h.deps), { appId, scopes: ['events:ingest', 'attest:verify'], mode: 'live', name: 'Android SDK' });
  const nightly = await createApiKey(operatorContext(h.deps), { appId, scopes: ['builds:read', 'threats:read'], mode: 'test', name: 'Nightly dashboard' });
  const rules = await createApiKey(operatorContext(h.deps), { appId, scopes: ['rules:write', 'rules:read'], mode: 'live', name: 'Platform team' });

  // A history of builds registered over REST with the CI key (no package declared, so no scan): more than one page
  // of the builds view (25), older than the graded ones below.
  for (let i = 0; i < HISTORY_BUILDS; i++) {
    await registerBuild(h, ci.key, { platform: i % 3 === 0 ? 'ios' : 'android', version: `2.3.${i}`, commit: createHash('sha1').update(`history-${i}`).digest('hex') });
    h.clock.advance(1_000);
  }

  // Two real APKs: a debuggable debug-signed one (a poor grade and findings) and a release-signed one.
  const riskyApk = await buildApk({ manifest: riskyManifest('2.4.1'), sign: 'debug' });
  const cleanApk = await buildApk({ manifest: androidManifest({ versionName: '2.5.0', minSdk: 26, targetSdk: 34, application: { 'android:allowBackup': 'false' } }), sign: 'release' });
  const risky = await uploadPackage(h, ci.key, riskyApk, 'android', '2.4.1');
  h.clock.advance(60_000);
  const clean = await uploadPackage(h, ci.key, cleanApk, 'android', '2.5.0');
  h.clock.advance(60_000);
  const pending = await registerBuild(h, ci.key, { platform: 'ios', version: '2.5.0', commit: 'b1946ac92492d2347c6235b4d2611184b1946ac9' });
  const riskyScan = (await waitForStaticScan(h, ci.key, risky.id)).scans.find((x: { engine: string }) => x.engine === 'static');
  await waitForStaticScan(h, ci.key, clean.id);
  // Two more builds of the risky package, the second after a suppression expired: a comparison to show.
  const baselines = await seedBaselines(h, appId, { ci: ci.key, rules: rules.key }, riskyScan.id);

  // Six days of events: hooking on the risky build from a handful of devices, the rest spread.
  const now = h.clock.now().getTime();
  const events: Record<string, unknown>[] = [];
  for (let d = 5; d >= 0; d--) {
    for (let i = 0; i < 6 + d * 3; i++) {
      const detection = DETECTIONS[(i + d) % DETECTIONS.length];
      const onRisky = detection === 'hooking' || detection === 'debugger';
      events.push({
        detection,
        verdict: detection === 'emulator' ? 'suspicious' : 'compromised',
        confidence: 0.9,
        action: detection === 'hooking' ? 'block' : 'warn',
        signals: detection === 'hooking' ? ['frida_server'] : ['su_binary'],
        platform: 'android',
        appVersion: onRisky ? '2.4.1' : '2.5.0',
        ...(detection === 'emulator' ? {} : { buildId: onRisky ? risky.id : clean.id }),
        occurredAt: new Date(now - d * DAY - (i % 5) * 3_600_000 - 60_000).toISOString(),
        deviceId: `device-${detection}-${i % (detection === 'hooking' ? 3 : 7)}-0c7f`,
      });
    }
  }
  // One noisy device: a burst of hooking reports within the hour each day (merged into one threat, counted as events).
  for (let d = 4; d >= 0; d--) {
    for (let k = 0; k < 2 + d * 2; k++) {
      events.push({
        detection: 'hooking', verdict: 'compromised', confidence: 0.95, action: 'block', signals: ['frida_server', 'frida_gadget'],
        platform: 'android', appVersion: '2.4.1', buildId: risky.id,
        occurredAt: new Date(now - d * DAY - 7_200_000 + k * 60_000).toISOString(), deviceId: 'device-hooking-noisy-9a1e',
      });
    }
  }
  for (let i = 0; i < events.length; i += 100) {
    const res = await post(h, '/v1/events', device.key, { events: events.slice(i, i + 100) });
    if (res.status !== 202 && res.status !== 200) throw new Error(`ingest answered ${res.status}: ${await res.text()}`);
  }

  // A trust rule for main, then jobs it refuses: a feature branch, a pull request, and something that is no token.
  const rule = await post(h, `/v1/apps/${appId}/oidc-rules`, rules.key, {
    subjectPattern: 'repo:acme/mobile-app:ref:refs/heads/main',
    workflowRef: 'acme/mobile-app/.github/workflows/release.yml@refs/heads/main',
    scopes: ['builds:write', 'builds:read'],
  });
  if (rule.status !== 201) throw new Error(`rule answered ${rule.status}`);
  const exchange = (token: string) =>
    h.api('/v1/auth/oidc', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}` },
      body: JSON.stringify({ token, appId }),
    });
  // Refusals over three days, in time order: what support reads when a customer says "CI can't get a token".
  const refusals: Array<[number, () => string]> = [
    [3, () => issuer.mint({ ref: 'refs/heads/feature/login' })],
    [3, () => issuer.mint({ ref: 'refs/heads/feature/login' })],
    [3, () => issuer.mint({ ref: 'refs/heads/feature/login' })],
    [3, () => 'eyJhbGciOiJSUzI1NiJ9.not-a-token'],
    [2, () => issuer.mint({ event_name: 'pull_request', ref: 'refs/pull/42/merge' })],
    [2, () => ''.padEnd(40, 'x')],
    [2, () => ''.padEnd(40, 'x')],
    [0, () => issuer.mint({ job_workflow_ref: 'acme/mobile-app/.github/workflows/nightly.yml@refs/heads/main' })],
    [0, () => issuer.mint({ job_workflow_ref: 'acme/mobile-app/.github/workflows/nightly.yml@refs/heads/main' })],
  ];
  const start = h.clock.now().getTime();
  for (const [daysAgo, token] of refusals) {
    h.clock.set(start - daysAgo * DAY);
    const res = await exchange(token());
    if (res.status !== 401) throw new Error(`a refused exchange answered ${res.status}`);
  }
  // A GitLab rule of the same app, and a merge-request pipeline it refuses whatever the rule says (one day ago).
  const gitlabRule = await post(h, `/v1/apps/${appId}/oidc-rules`, rules.key, {
    provider: 'gitlab',
    issuer: gitlab.url,
    subjectPattern: 'project_path:acme/mobile-app:ref_type:branch:ref:main',
    protectedRefOnly: true,
    scopes: ['builds:write'],
  });
  if (gitlabRule.status !== 201) throw new Error(`the GitLab rule answered ${gitlabRule.status}`);
  for (let i = 0; i < 2; i++) {
    h.clock.set(start - DAY);
    const mergeRequest = gitlab.sign(gitlabClaims({ issuer: gitlab.url, audience: h.baseUrl, now: h.clock.now() }, { pipeline_source: 'merge_request_event' }), GITLAB_HEADER);
    if ((await exchange(mergeRequest)).status !== 401) throw new Error('a merge-request pipeline was not refused');
  }
  h.clock.set(start);
  if ((await exchange(issuer.mint())).status !== 200) throw new Error('the trusted exchange failed');

  return {
    appId,
    quietAppId: quiet._id,
    builds: { risky: risky.id, clean: clean.id, pending: pending.id },
    baselines,
    nightlyKey: { id: nightly.doc._id, key: nightly.key },
    ciKey: { id: ci.doc._id, key: ci.key },
  };
}
