// shieldgate-ci run as a GitHub Actions step would run it, against the real service: keyless upload (the job's OIDC
// token from GitHub's token endpoint, exchanged), the static scan awaited, the gate both ways, SARIF valid against the
// SARIF 2.1.0 schema (from the registry package @microsoft/jest-sarif), outputs and job summary written, a refused
// exchange explained with the job's claims (exit 3), the package's signer named in the log, summary and SARIF, an
// expired URL and a cut connection survived, API-key mode, and a retried step registering one build.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import '@microsoft/jest-sarif';
import { startHarness, json, readJson, type Harness } from '../support/harness';
import { startOidcIssuer, type OidcIssuer } from '../support/oidc-issuer';
import { startGitHubTokenEndpoint, type GitHubTokenEndpoint } from '../support/github-token-endpoint';
import { startCuttingProxy, type CuttingProxy } from '../support/client-cutting-proxy';
import { digestFile } from '../../client/src/file-digest';
import { idempotencyKey } from '../../client/src/commit';
import { createApiClient } from '../../client/src/api';
import { uploadArtifact } from '../../client/src/upload';
import { createProgress } from '../../client/src/progress';
import { apiKeyCredential } from '../../client/src/credentials';
import { PassThrough } from 'node:stream';
import { githubOidcCredential } from '../../client/src/credentials';
import { androidManifest, buildApk, cleanupFixtures } from '../fixtures/build-packages';
import { printedSigners } from '../fixtures/signer-packages';

const BIN = path.join(__dirname, '..', '..', 'client', 'bin', 'shieldgate-ci.js');
const ACTION = path.join(__dirname, '..', '..', 'action', 'dist', 'index.js');
const SHA = 'a3f1c2e7d9b04c5e8f6a7b2c1d0e9f8a7b6c5d4e';
const RUN_ID = '9876543210';

let issuer: OidcIssuer;
let proxy: CuttingProxy;
let h: Harness;
let github: GitHubTokenEndpoint;
let appId: string;
let strangerAppId: string;
let apk: string;
let bigApk: string;
let work: string;
let runCounter = 0;
/** Claims the next tokens carry beyond the defaults (e.g. a self-hosted runner). */
let claimOverrides: Record<string, unknown> = {};

interface Result {
  code: number;
  stdout: string;
  stderr: string;
  outputs: Record<string, string>;
  summary: string;
}

/** GITHUB_OUTPUT in the delimiter form: name<<DELIM \n value \n DELIM. */
function readOutputs(file: string): Record<string, string> {
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  const outputs: Record<string, string> = {};
  const re = /^([\w-]+)<<(\S+)\n([\s\S]*?)\n\2$/gm;
  for (let m = re.exec(text); m; m = re.exec(text)) outputs[m[1]] = m[3];
  return outputs;
}

function githubEnv(extra: Record<string, string> = {}): Record<string, string> {
  const dir = fs.mkdtempSync(path.join(work, `step-${++runCounter}-`));
  return {
    PATH: process.env.PATH ?? '',
    HOME: os.tmpdir(),
    GITHUB_ACTIONS: 'true',
    GITHUB_OUTPUT: path.join(dir, 'output'),
    GITHUB_STEP_SUMMARY: path.join(dir, 'summary.md'),
    GITHUB_SHA: SHA,
    GITHUB_RUN_ID: RUN_ID,
    GITHUB_RUN_ATTEMPT: String(runCounter),
    GITHUB_REPOSITORY: 'acme/mobile-app',
    SHIELDGATE_URL: proxy.url,
    ...github.env,
    ...extra,
  };
}

/** Runs the command to its end; `onStdout` sees its stdout so far at each chunk (to act while it waits). */
function runCli(args: string[], env: Record<string, string>, script = BIN, onStdout?: (stdout: string) => void): Promise<Result> {
  return new Promise((resolve) => {
    let seen = '';
    const child = execFile(process.execPath, [script, ...args], { env, cwd: work, timeout: 90_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      resolve({
        code,
        stdout,
        stderr,
        outputs: readOutputs(env.GITHUB_OUTPUT ?? ''),
        summary: env.GITHUB_STEP_SUMMARY && fs.existsSync(env.GITHUB_STEP_SUMMARY) ? fs.readFileSync(env.GITHUB_STEP_SUMMARY, 'utf8') : '',
      });
    });
    if (onStdout) child.stdout!.on('data', (chunk: Buffer | string) => onStdout((seen += String(chunk))));
  });
}

const uploadArgs = (file: string, ...more: string[]) => ['upload', '--app', appId, '--file', file, '--platform', 'android', '--version', '2.4.1', ...more];

async function exchangesOfApp(): Promise<number> {
  return (await h.deps.repos.audit.list(appId, { limit: 100, action: 'oidc.exchanged' })).data.length;
}

async function buildsOfApp(): Promise<number> {
  return (await h.deps.repos.builds.listForApp(appId, 100)).length;
}

beforeAll(async () => {
  if (!fs.existsSync(path.join(__dirname, '..', '..', 'client', 'dist', 'cli.js'))) throw new Error('client/dist is missing: run npm run build');
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'shieldgate-ci-'));
  issuer = await startOidcIssuer();
  proxy = await startCuttingProxy();
  // The service's public address is the proxy: upload URLs and the OIDC audience go through it.
  h = await startHarness({ env: { OIDC_ISSUER: issuer.url, OIDC_ALLOW_INSECURE_ISSUER: 'on', PUBLIC_BASE_URL: proxy.url } });
  proxy.setTarget(Number(new URL(h.baseUrl).port));
  github = await startGitHubTokenEndpoint((audience) =>
    issuer.sign(issuer.claims({ audience, now: h.clock.now() }, { sha: SHA, run_id: RUN_ID, run_attempt: '1', runner_environment: 'github-hosted', ...claimOverrides })),
  );
  ({ appId } = await h.newApp());
  ({ appId: strangerAppId } = await h.newApp());
  const admin = await h.newKey(appId, ['rules:write']);
  const rule = { subjectPattern: 'repo:acme/mobile-app:ref:refs/heads/main', scopes: ['builds:write', 'builds:read', 'scans:read'] };
  expect((await h.api(`/v1/apps/${appId}/oidc-rules`, { method: 'POST', headers: json(admin.key), body: JSON.stringify(rule) })).status).toBe(201);
  const manifest = androidManifest({ minSdk: 26, targetSdk: 36, application: { 'android:debuggable': 'true' } });
  apk = await buildApk({ manifest, sign: 'release' });
  bigApk = await buildApk({ manifest, sign: 'release', padBytes: 3 * 1024 * 1024 });
});

afterAll(async () => {
  await h?.close();
  await github?.close();
  await proxy?.close();
  await issuer?.close();
  await cleanupFixtures();
  fs.rmSync(work, { recursive: true, force: true });
});

describe('shieldgate-ci upload in GitHub Actions', () => {
  it('uploads keylessly, waits, writes outputs, summary, annotations and valid SARIF, and passes a gate the grade meets', async () => {
    const sarifFile = path.join(work, 'keyless.sarif');
    const r = await runCli(uploadArgs(apk, '--wait', '--fail-under', 'F', '--sarif', sarifFile), githubEnv());
    expect(r.code).toBe(0);
    expect(github.requests.at(-1)).toBe(proxy.url); // the audience is the server's address
    // The access token is masked on stderr (the runner reads workflow commands there too), so a captured stdout
    // (`out=$(shieldgate-ci ... --json)`) never holds it; no other line of either stream shows a token.
    expect(r.stderr).toMatch(/^::add-mask::.+$/m);
    const mask = /^::add-mask::(.+)$/m.exec(r.stderr)![1];
    expect(r.stdout).not.toContain(mask);
    expect(r.stdout).not.toMatch(/eyJ/);
    expect(r.stderr.split('\n').filter((line) => /eyJ/.test(line))).toEqual([`::add-mask::${mask}`]);

    expect(r.outputs['build-id']).toMatch(/^bld_/);
    expect(r.outputs['scan-id']).toMatch(/^scn_/);
    const scan = await readJson(await h.api(`/v1/scans/${r.outputs['scan-id']}`, { headers: json((await h.newKey(appId, ['scans:read'])).key) }));
    expect(scan.engine).toBe('static');
    expect(r.outputs.grade).toBe(scan.grade);
    expect(r.outputs.score).toBe(String(scan.score));
    expect(r.summary).toContain(`grade ${scan.grade}`);
    expect(r.summary).toContain(r.outputs['build-id']);
    // The signer, as apksigner prints it, named in the log and the summary.
    const [signer] = await printedSigners(apk);
    expect(scan.signing.signers[0].sha256).toBe(signer);
    expect(r.summary).toContain(`Signed by \`${signer.slice(0, 16)}…\``);
    expect(r.stdout).toContain(`Signed by ${signer.slice(0, 16)}…`);
    for (const f of scan.findings) expect(r.stdout).toContain(f.id); // the findings table
    const serious = scan.findings.filter((f: { severity: string }) => f.severity === 'high' || f.severity === 'critical');
    expect(serious.length).toBeGreaterThan(0); // a debuggable APK
    for (const f of serious) expect(r.stdout).toContain(`::error title=shieldgate ${f.severity}%3A ${f.id}::`);

    const reader = await h.newKey(appId, ['builds:read', 'scans:read']);
    const build = await readJson(await h.api(`/v1/builds/${r.outputs['build-id']}`, { headers: json(reader.key) }));
    expect(build.commit).toBe(SHA); // --commit defaults to GITHUB_SHA
    expect(build.artifact.status).toBe('uploaded');
    expect(build.provenance).toEqual({
      provider: 'github',
      repository: 'acme/mobile-app',
      repositoryId: '123456789',
      workflowRef: 'acme/mobile-app/.github/workflows/release.yml@refs/heads/main',
      sha: SHA,
      ref: 'refs/heads/main',
      runId: RUN_ID,
      runAttempt: '1',
      eventName: 'push',
      runnerEnvironment: 'github-hosted',
    });
    const preview = await readJson(await h.api(`/v1/scans/${build.scans[0].id}`, { headers: json(reader.key) }));
    expect(preview.findings.map((f: { id: string }) => f.id)).not.toContain('preview.commit-mismatch');

    const sarif = JSON.parse(fs.readFileSync(sarifFile, 'utf8'));
    (expect(sarif) as unknown as { toBeValidSarifLog(): void }).toBeValidSarifLog();
    const run = sarif.runs[0];
    expect(run.tool.driver.rules.map((rule: { id: string }) => rule.id).sort()).toEqual([...new Set(scan.findings.map((f: { id: string }) => f.id))].sort());
    expect(run.tool.driver.rules[0].help.text).toBeTruthy();
    expect(run.results[0].locations[0].physicalLocation.artifactLocation.uri).toBe('app/src/main/AndroidManifest.xml');
    expect(run.results[0].partialFingerprints['shieldgateFinding/v2']).toMatch(/^[0-9a-f]{64}$/);
    expect(run.properties.signer).toEqual({ verified: true, sha256: signer, subject: scan.signing.signers[0].subject, schemes: scan.signing.schemes });
  });

  it('fails the gate with exit 2 when the grade is under --fail-under, and writes SARIF with the same fingerprints', async () => {
    const first = JSON.parse(fs.readFileSync(path.join(work, 'keyless.sarif'), 'utf8'));
    const sarifFile = path.join(work, 'gate.sarif');
    const r = await runCli(uploadArgs(apk, '--fail-under', 'A+', '--sarif', sarifFile, '--manifest-path', 'android/app/AndroidManifest.xml'), githubEnv());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/gate failed: grade \S+ is under A\+/);
    expect(r.summary).toContain('Gate failed');
    const sarif = JSON.parse(fs.readFileSync(sarifFile, 'utf8'));
    (expect(sarif) as unknown as { toBeValidSarifLog(): void }).toBeValidSarifLog();
    expect(sarif.runs[0].results[0].locations[0].physicalLocation.artifactLocation.uri).toBe('android/app/AndroidManifest.xml');
    const prints = (log: typeof sarif) => log.runs[0].results.map((x: { partialFingerprints: Record<string, string> }) => x.partialFingerprints['shieldgateFinding/v2']).sort();
    expect(prints(sarif)).toEqual(prints(first)); // the same alerts, not new ones, on the next upload
  });

  it('writes no SARIF for a package that could not be analysed, and removes one left from before; exit 2', async () => {
    // The APK aapt built, cut in half: its zip directory is gone. SARIF of such a scan would close every open alert.
    const cut = path.join(work, 'cut.apk');
    const bytes = fs.readFileSync(apk);
    fs.writeFileSync(cut, bytes.subarray(0, Math.floor(bytes.length / 2)));
    const sarifFile = path.join(work, 'cut.sarif');
    fs.writeFileSync(sarifFile, '{"left":"from an earlier step"}');
    const r = await runCli(uploadArgs(cut, '--sarif', sarifFile), githubEnv());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/gate failed: the package could not be analysed/);
    expect(fs.existsSync(sarifFile)).toBe(false);
    expect(r.outputs['scan-id']).toMatch(/^scn_/); // the scan exists and is reported; only the SARIF is withheld
  });

  it('prints the job claims and a rule that would admit it when the exchange is refused, never the token; exit 3', async () => {
    const r = await runCli(['upload', '--app', strangerAppId, '--file', apk, '--platform', 'android', '--version', '2.4.1'], githubEnv());
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('sub: repo:acme/mobile-app:ref:refs/heads/main');
    expect(r.stderr).toContain('repository_id: 123456789');
    expect(r.stderr).toContain('job_workflow_ref: acme/mobile-app/.github/workflows/release.yml@refs/heads/main');
    expect(r.stderr).toContain(`/v1/apps/${strangerAppId}/oidc-rules`);
    expect(r.stderr).toContain('"subjectPattern":"repo:acme/mobile-app:ref:refs/heads/main"');
    expect(r.stdout).toMatch(/^::error title=shieldgate%3A OIDC exchange refused::/m);
    expect(`${r.stdout}${r.stderr}`).not.toMatch(/eyJ[\w-]+\.[\w-]+\./);
  });

  it('resumes with a fresh URL when the upload URL expired, and a retried step registers the build once', async () => {
    const env = githubEnv();
    // The step's first try registered the build (the key the client derives from run, attempt and file hash) and
    // died before uploading; the retry comes after the 15-minute URL expired.
    const digest = await digestFile(bigApk);
    const key = idempotencyKey(env, digest.sha256)!;
    const writer = await h.newKey(appId, ['builds:write']);
    const body = { platform: 'android', version: '2.4.1', commit: SHA, artifact: digest };
    const registered = await h.api('/v1/builds', { method: 'POST', headers: { ...json(writer.key), 'idempotency-key': key }, body: JSON.stringify(body) });
    expect(registered.status).toBe(201);
    const buildId = (await readJson(registered)).id;
    // Another build of the same package, whose URL a client holds from before.
    const held = await readJson(await h.api('/v1/builds', { method: 'POST', headers: json(writer.key), body: JSON.stringify({ ...body, version: '2.4.2' }) }));
    const before = await buildsOfApp();
    h.clock.advance(16 * 60 * 1000);

    // This runner's clock says the held URL is still good, the service's that it expired: the PUT is refused with a
    // 403 and the connection closed; the client sees the answer or the reset, depending on how far the body got, and
    // either way asks for a fresh URL and starts again.
    const lines: string[] = [];
    await uploadArtifact({
      api: createApiClient(h.baseUrl),
      credential: apiKeyCredential(writer.key),
      build: held,
      file: bigApk,
      progress: createProgress(digest.sizeBytes, new PassThrough().resume(), false),
      log: (line) => lines.push(line),
    });
    expect(lines.join('\n')).toMatch(/(upload URL expired|connection broke).*; starting again with a fresh URL/);
    expect((await h.deps.repos.builds.findById(appId, held.id))?.artifact?.status).toBe('uploaded');

    // The retried step: its registration is replayed without the expired URL (a replay signs the stored URL again
    // only within its window), so the client asks for a fresh one before sending anything.
    const retried = await runCli(uploadArgs(bigApk, '--wait'), env);
    expect(retried.code).toBe(0);
    expect(retried.stdout).toContain('already registered by this run');
    expect(retried.stderr).not.toMatch(/starting again/);
    expect(retried.outputs['build-id']).toBe(buildId);
    const stored = await h.deps.repos.builds.findById(appId, buildId);
    expect(stored?.artifact?.status).toBe('uploaded');
    // The fresh URL was issued after the clock moved (POST /v1/builds/{id}/upload-url).
    expect(stored!.artifact!.uploadUrlExpiresAt.getTime()).toBeGreaterThan(h.clock.now().getTime());

    // The step retried once more after it succeeded: the same build, nothing registered again.
    const again = await runCli(uploadArgs(bigApk, '--wait'), env);
    expect(again.code).toBe(0);
    expect(again.outputs['build-id']).toBe(buildId);
    expect(await buildsOfApp()).toBe(before);
  });

  it('starts again with a fresh URL when the connection is cut mid-upload', async () => {
    proxy.armCut(1024 * 1024);
    const r = await runCli(uploadArgs(bigApk, '--wait'), githubEnv());
    expect(proxy.cuts).toBe(1);
    expect(r.stderr).toMatch(/the connection broke .*starting again with a fresh URL/);
    expect(r.code).toBe(0);
    expect((await h.deps.repos.builds.findById(appId, r.outputs['build-id']))?.artifact?.status).toBe('uploaded');
  });

  it('starts again when the connection is cut while writes of a large package are still queued', async () => {
    // 24 MB is more than the socket buffers hold, so the cut finds writes in flight: they fail, and the upload must
    // still end in one fresh start (not a crash on the failed writes).
    const largeApk = await buildApk({ manifest: androidManifest({ minSdk: 26, targetSdk: 36 }), sign: 'release', padBytes: 24 * 1024 * 1024 });
    const cuts = proxy.cuts;
    proxy.armCut(2 * 1024 * 1024);
    const r = await runCli(uploadArgs(largeApk), githubEnv());
    expect(proxy.cuts).toBe(cuts + 1);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: expect.stringMatching(/the connection broke .*starting again with a fresh URL/) });
    expect(r.stderr.match(/starting again/g)).toHaveLength(1);
    expect((await h.deps.repos.builds.findById(appId, r.outputs['build-id']))?.artifact?.status).toBe('uploaded');
  });

  it('uploads with a URL just issued even when this runner\'s clock says it has expired (the service\'s clock decides)', async () => {
    // A service whose clock is 20 minutes behind the runner's: every URL it issues (15 minutes) looks expired here.
    const behind = await startHarness({ now: new Date(Date.now() - 20 * 60_000), jobs: false });
    try {
      const { appId: ownApp } = await behind.newApp('scale');
      const { key } = await behind.newKey(ownApp, ['builds:write', 'builds:read']);
      const digest = await digestFile(apk);
      const res = await behind.api('/v1/builds', { method: 'POST', headers: json(key), body: JSON.stringify({ platform: 'android', version: '1.0.0', artifact: digest }) });
      const build = await readJson(res);
      expect(Date.parse(build.artifact.uploadUrlExpiresAt)).toBeLessThan(Date.now());
      const renewals: number[] = [];
      const api = createApiClient(behind.baseUrl);
      api.use({ onRequest: ({ request }) => void (request.url.endsWith('/upload-url') && renewals.push(1)) });
      await uploadArtifact({ api, credential: apiKeyCredential(key), build, file: apk, progress: createProgress(digest.sizeBytes, new PassThrough().resume(), false), log: () => undefined });
      expect(renewals).toHaveLength(1); // the held URL looked expired: one fresh URL, used as issued
      expect((await behind.deps.repos.builds.findById(ownApp, build.id))?.artifact?.status).toBe('uploaded');
    } finally {
      await behind.close();
    }
  });

  it('uses SHIELDGATE_API_KEY when set, without asking GitHub for a token', async () => {
    const { key } = await h.newKey(appId, ['builds:write', 'builds:read', 'scans:read']);
    const asked = github.requests.length;
    const env = githubEnv({ SHIELDGATE_API_KEY: key });
    const r = await runCli(uploadArgs(apk, '--wait', '--json'), env);
    expect(r.code).toBe(0);
    expect(github.requests.length).toBe(asked);
    expect(r.stderr).toContain(`::add-mask::${key}`);
    expect(r.stdout).not.toContain(key); // captured JSON output holds no secret
    const result = JSON.parse(r.stdout.split('\n').filter((line) => line.startsWith('{')).at(-1)!);
    expect(result).toMatchObject({ buildId: r.outputs['build-id'], scanId: r.outputs['scan-id'], gate: { passed: true } });
    const build = await readJson(await h.api(`/v1/builds/${result.buildId}`, { headers: json(key) }));
    expect(build.provenance).toBeNull();
    const who = await runCli(['whoami', '--json'], env);
    expect(JSON.parse(who.stdout.split('\n').filter((line) => line.startsWith('{'))[0])).toMatchObject({ appId, auth: 'api_key' });
  });

  it('records a declared commit other than the job\'s sha as a high finding, and a self-hosted runner as a low one', async () => {
    claimOverrides = { runner_environment: 'self-hosted' };
    try {
      const other = 'b'.repeat(40);
      const r = await runCli(uploadArgs(apk, '--commit', other), githubEnv());
      expect(r.code).toBe(0);
      const reader = await h.newKey(appId, ['builds:read', 'scans:read']);
      const build = await readJson(await h.api(`/v1/builds/${r.outputs['build-id']}`, { headers: json(reader.key) }));
      expect(build.provenance).toMatchObject({ sha: SHA, runnerEnvironment: 'self-hosted' });
      const preview = await readJson(await h.api(`/v1/scans/${build.scans[0].id}`, { headers: json(reader.key) }));
      const severities = Object.fromEntries(preview.findings.map((f: { id: string; severity: string }) => [f.id, f.severity]));
      expect(severities['preview.commit-mismatch']).toBe('high');
      expect(severities['preview.self-hosted-runner']).toBe('low');
    } finally {
      claimOverrides = {};
    }
  });

  it('runs the same upload as the bundled GitHub Action, from the step inputs', async () => {
    const env = githubEnv({ SHIELDGATE_URL: '' });
    const inputs = { 'INPUT_SERVER-URL': proxy.url, 'INPUT_APP-ID': appId, INPUT_FILE: apk, INPUT_PLATFORM: 'android', INPUT_VERSION: '2.4.2', 'INPUT_FAIL-UNDER': 'F', INPUT_SARIF: path.join(work, 'action.sarif'), 'INPUT_API-KEY': '' };
    const r = await runCli([], { ...env, ...inputs }, ACTION);
    expect(r.code).toBe(0);
    expect(Object.keys(r.outputs).sort()).toEqual(['build-id', 'grade', 'scan-id', 'score']);
    expect(r.summary).toContain(`grade ${r.outputs.grade}`);
    expect(fs.existsSync(path.join(work, 'action.sarif'))).toBe(true);
    const action = fs.readFileSync(path.join(__dirname, '..', '..', 'action', 'action.yml'), 'utf8');
    expect(action).toMatch(/^\s+using: node24$/m);
    expect(action).toMatch(/^\s+main: dist\/index\.js$/m);
  });

  it('whoami exchanges the job token when no key is set', async () => {
    const r = await runCli(['whoami', '--app', appId], githubEnv());
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`app ${appId}`);
    expect(r.stdout).toContain('oidc');
  });

  it('asks GitHub again, after a back-off, when its token service has a hiccup', async () => {
    const asked = github.requests.length;
    github.failNext(3); // three answers of 503 in a row, then a token
    const r = await runCli(['whoami', '--app', appId], githubEnv());
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    expect(github.requests.length - asked).toBe(1);
  });

  it('answers a usage error with one line and exit 1', async () => {
    const r = await runCli(['upload', '--app', appId, '--file', apk, '--platform', 'windows', '--version', '1'], githubEnv());
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe('shieldgate-ci: --platform must be android or ios');
  });
});

describe('access tokens outlived by a long wait (the service issues them for 10 minutes)', () => {
  it('renews the access token by a second exchange when --wait outlives it', async () => {
    const writer = await h.newKey(appId, ['builds:write']);
    const body = { platform: 'android', version: '2.5.0', commit: SHA, artifact: await digestFile(apk) };
    const registered = await h.api('/v1/builds', { method: 'POST', headers: json(writer.key), body: JSON.stringify(body) });
    expect(registered.status).toBe(201);
    const build = await readJson(registered);
    const asked = github.requests.length;
    const exchanged = await exchangesOfApp();
    let uploadStatus = 0;
    // The step waits for a scan of a package that arrives only after the step's access token expired.
    const r = await runCli(['scan', build.id, '--app', appId, '--wait', '--fail-under', 'F'], githubEnv(), BIN, (stdout) => {
      if (uploadStatus !== 0 || !stdout.includes(`waiting for the static scan of build ${build.id}`)) return;
      uploadStatus = -1;
      h.clock.advance(11 * 60 * 1000);
      void fetch(build.artifact.uploadUrl, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: fs.readFileSync(apk) }).then(
        (res) => (uploadStatus = res.status),
        () => (uploadStatus = -2),
      );
    });
    expect(uploadStatus).toBe(200);
    expect(r.code).toBe(0);
    expect(r.outputs['scan-id']).toMatch(/^scn_/);
    // One exchange at the start, one when the service refused the expired token: each with a fresh job token.
    expect(github.requests.length - asked).toBe(2);
    expect((await exchangesOfApp()) - exchanged).toBe(2);
    expect(r.stderr.match(/^::add-mask::/gm)).toHaveLength(2); // the renewed token is masked too
  });

  it('renews the access token by a second exchange when an upload retried after a cut outlives it', async () => {
    const asked = github.requests.length;
    const cuts = proxy.cuts;
    // The connection drops, and the fresh URL is asked for after the access token expired.
    proxy.armCut(1024 * 1024, () => h.clock.advance(11 * 60 * 1000));
    const r = await runCli(uploadArgs(bigApk), githubEnv());
    expect(proxy.cuts).toBe(cuts + 1);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: expect.stringMatching(/the connection broke .*starting again with a fresh URL/) });
    expect(github.requests.length - asked).toBe(2);
    expect((await h.deps.repos.builds.findById(appId, r.outputs['build-id']))?.artifact?.status).toBe('uploaded');
  });

  it('renews the access token before a request once it is within a minute of its expiry on the client\'s clock', async () => {
    const now = () => h.clock.now().getTime(); // the client's clock is the service's here, so time can pass at once
    const env = githubEnv({ GITHUB_ACTIONS: 'false' }); // no ::add-mask:: lines in the test log
    const api = createApiClient(proxy.url);
    const asked = github.requests.length;
    const credential = await githubOidcCredential(api, env, proxy.url, appId, () => undefined, now);
    const first = await credential.authorization();
    h.clock.advance(8 * 60 * 1000);
    expect(await credential.authorization()).toBe(first); // two minutes left: kept
    expect(github.requests.length - asked).toBe(1);
    h.clock.advance(90 * 1000);
    const second = await credential.authorization(); // 30 s left: renewed before it is sent
    expect(second).not.toBe(first);
    expect(github.requests.length - asked).toBe(2);
    h.clock.advance(60 * 1000); // the first token has expired; the second works
    expect((await h.api('/v1/whoami', { headers: { authorization: first } })).status).toBe(401);
    expect((await h.api('/v1/whoami', { headers: { authorization: second } })).status).toBe(200);
  });
});
