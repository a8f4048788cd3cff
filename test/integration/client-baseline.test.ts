// shieldgate-ci gating on what a build adds, run as a CI step against the real service: three builds of one package
// (aapt-built, apksigner-signed APKs). The first has findings, a high one among them, and passes --fail-on-new high
// (no baseline yet: it becomes the baseline). The second fixes one finding and adds a high one: exit 2 naming it, its
// SARIF result `new` and every other `unchanged`, and the summary listing it as new and the fixed one as fixed. A
// suppression is recorded for the added finding; the third build passes, and its SARIF carries the suppression with
// its reason; once the suppression has expired, a fourth build lists the finding as back. The service's own scans are the oracle for status, fingerprints and fixed findings; SARIF is checked
// against the SARIF 2.1.0 schema (@microsoft/jest-sarif). The bundled GitHub Action passes fail-on-new through.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import '@microsoft/jest-sarif';
import { startHarness, json, readJson, type Harness } from '../support/harness';
import { androidManifest, buildApk, cleanupFixtures } from '../fixtures/build-packages';

const BIN = path.join(__dirname, '..', '..', 'client', 'bin', 'shieldgate-ci.js');
const ACTION = path.join(__dirname, '..', '..', 'action', 'dist', 'index.js');
const SERVICE_KEY = 'shieldgate/v1';

interface Result {
  code: number;
  stdout: string;
  stderr: string;
  summary: string;
  sarif: any;
}
interface ScanFinding {
  id: string;
  severity: string;
  fingerprint: string;
  status: 'new' | 'existing' | null;
  suppressed: { id: string; reason: string; expiresAt: string } | null;
}

let h: Harness;
let work: string;
let runs = 0;

beforeAll(async () => {
  if (!fs.existsSync(path.join(__dirname, '..', '..', 'client', 'dist', 'cli.js'))) throw new Error('client/dist is missing: run npm run build:client');
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'shieldgate-ci-baseline-'));
  h = await startHarness();
});

afterAll(async () => {
  await h?.close();
  await cleanupFixtures();
  fs.rmSync(work, { recursive: true, force: true });
});

/** A CI step: its own run id (so no two steps share an Idempotency-Key), summary file and SARIF file. */
function step(script: string, args: string[], key: string, extra: Record<string, string> = {}): Promise<Result> {
  const dir = fs.mkdtempSync(path.join(work, `step-${++runs}-`));
  const sarifFile = path.join(dir, 'shieldgate.sarif');
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: os.tmpdir(),
    GITHUB_ACTIONS: 'true',
    GITHUB_STEP_SUMMARY: path.join(dir, 'summary.md'),
    GITHUB_OUTPUT: path.join(dir, 'output'),
    GITHUB_RUN_ID: String(4_000_000 + runs),
    GITHUB_RUN_ATTEMPT: '1',
    SHIELDGATE_URL: h.baseUrl,
    SHIELDGATE_API_KEY: key,
    INPUT_SARIF: sarifFile,
    ...extra,
  };
  const argv = script === BIN ? [...args, '--sarif', sarifFile] : args;
  return new Promise((resolve) => {
    execFile(process.execPath, [script, ...argv], { env, cwd: work, timeout: 120_000 }, (error, stdout, stderr) => {
      resolve({
        code: error ? (typeof error.code === 'number' ? error.code : -1) : 0,
        stdout,
        stderr,
        summary: fs.existsSync(env.GITHUB_STEP_SUMMARY) ? fs.readFileSync(env.GITHUB_STEP_SUMMARY, 'utf8') : '',
        sarif: fs.existsSync(sarifFile) ? JSON.parse(fs.readFileSync(sarifFile, 'utf8')) : null,
      });
    });
  });
}

/** The static scan the step reported, read back from the service. */
async function scanOf(r: Result, key: string): Promise<any> {
  const scanId = r.sarif.runs[0].properties.scanId;
  return readJson(await h.api(`/v1/scans/${scanId}`, { headers: json(key) }));
}

const valid = (sarif: unknown) => (expect(sarif) as unknown as { toBeValidSarifLog(): void }).toBeValidSarifLog();
const results = (r: Result) => r.sarif.runs[0].results as Array<{ ruleId: string; baselineState?: string; partialFingerprints: Record<string, string>; suppressions?: unknown[] }>;
/** The lines of one `#### ` section of the summary. */
const section = (summary: string, heading: RegExp) => {
  const lines = summary.split('\n');
  const start = lines.findIndex((l) => heading.test(l));
  if (start < 0) return '';
  const end = lines.findIndex((l, i) => i > start && l.startsWith('#### '));
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
};

// Build 1: allowBackup absent (a medium finding) and cleartext traffic allowed (a high one). Build 2: allowBackup
// off (fixed) and testOnly on (a high finding the build adds).
const BASE = { minSdk: 26, targetSdk: 36 };
const first = () => buildApk({ manifest: androidManifest({ ...BASE, application: { 'android:usesCleartextTraffic': 'true' } }), sign: 'release' });
const second = () => buildApk({ manifest: androidManifest({ ...BASE, application: { 'android:usesCleartextTraffic': 'true', 'android:allowBackup': 'false', 'android:testOnly': 'true' } }), sign: 'release' });

describe('shieldgate-ci --fail-on-new across three builds of a package', () => {
  it('passes the first build (the baseline), fails the build that adds a high finding, and passes it once suppressed', async () => {
    const { appId } = await h.newApp();
    // The release pipeline's key: its builds are the baseline (docs/contract.md, "Release builds").
    const { key } = await h.newKey(appId, ['builds:write', 'builds:read', 'scans:read', 'rules:write'], 'live', { releaseBuilds: true });
    const upload = (file: string, version: string, ...more: string[]) => ['upload', '--app', appId, '--file', file, '--platform', 'android', '--version', version, '--fail-on-new', 'high', ...more];
    const [apk1, apk2] = await Promise.all([first(), second()]);

    // Build 1: no baseline. It has a high finding, and passes: it is what later builds are compared with.
    const r1 = await step(BIN, upload(apk1, '2.4.1'), key);
    expect({ code: r1.code, stderr: r1.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    const scan1 = await scanOf(r1, key);
    expect(scan1.baseline).toBeNull();
    expect(scan1.findings.map((f: ScanFinding) => f.id)).toEqual(expect.arrayContaining(['android.cleartext-traffic', 'android.allow-backup']));
    expect(scan1.findings.some((f: ScanFinding) => f.severity === 'high' || f.severity === 'critical')).toBe(true);
    expect(r1.stdout).toMatch(/--fail-on-new: no baseline yet/);
    valid(r1.sarif);
    // Each result carries the service's fingerprint of its finding.
    expect(results(r1).map((x) => x.partialFingerprints[SERVICE_KEY]).sort()).toEqual(scan1.findings.map((f: ScanFinding) => f.fingerprint).sort());

    // Build 2: testOnly added, allowBackup fixed; --fail-under F passes, so only --fail-on-new fails it.
    h.clock.advance(60_000);
    const r2 = await step(BIN, upload(apk2, '2.4.2', '--fail-under', 'F'), key);
    const scan2 = await scanOf(r2, key);
    expect(scan2.baseline).toEqual({ scanId: scan1.id, buildId: expect.stringMatching(/^bld_/) });
    const added = scan2.findings.filter((f: ScanFinding) => f.status === 'new');
    expect(added.map((f: ScanFinding) => f.id)).toEqual(['android.test-only']);
    expect(added[0].severity).toBe('high');
    expect(scan2.fixedFindings.map((f: { id: string }) => f.id)).toEqual(['android.allow-backup']);
    expect(r2.code).toBe(2);
    expect(r2.stderr).toContain('gate failed: 1 new finding(s) at or above high: android.test-only (--fail-on-new)');
    expect(r2.stderr).not.toContain('--fail-under)');
    valid(r2.sarif);
    const states = Object.fromEntries(results(r2).map((x) => [x.partialFingerprints[SERVICE_KEY], x.baselineState]));
    for (const f of scan2.findings as ScanFinding[]) expect([f.id, states[f.fingerprint]]).toEqual([f.id, f.id === 'android.test-only' ? 'new' : 'unchanged']);
    expect(r2.stdout).toMatch(/::error title=shieldgate high%3A android\.test-only::/);
    // The summary: new first, then fixed, then existing.
    const since = `since build \`${scan2.baseline.buildId}\``;
    const headings = r2.summary.split('\n').filter((l) => l.startsWith('#### '));
    expect(headings).toEqual([`#### New ${since} (1)`, `#### Fixed ${since} (1)`, `#### Existing (${scan2.findings.length - 1})`]);
    expect(section(r2.summary, /^#### New /)).toContain('| high | `android.test-only` |');
    expect(section(r2.summary, /^#### Fixed /)).toContain('| `android.allow-backup` |');
    expect(section(r2.summary, /^#### Existing /)).toContain('`android.cleartext-traffic`');
    expect(r2.summary).toContain('**Gate failed**');

    // The team accepts the added finding, this instance only, for 30 days.
    const reason = 'QA builds of the partner program install with adb -t until June';
    const expiresAt = new Date(h.clock.now().getTime() + 30 * 86_400_000).toISOString();
    const created = await h.api(`/v1/apps/${appId}/suppressions`, {
      method: 'POST',
      headers: json(key),
      body: JSON.stringify({ findingId: 'android.test-only', fingerprint: added[0].fingerprint, reason, expiresAt }),
    });
    expect(created.status).toBe(201);
    const suppression = await readJson(created);

    // Build 3: the same package. The finding is existing and suppressed: the gate passes, SARIF carries the reason.
    h.clock.advance(60_000);
    const r3 = await step(BIN, upload(apk2, '2.4.3'), key);
    expect({ code: r3.code, stderr: r3.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    const scan3 = await scanOf(r3, key);
    const accepted = (scan3.findings as ScanFinding[]).find((f) => f.id === 'android.test-only')!;
    expect(accepted).toMatchObject({ status: 'existing', suppressed: { id: suppression.id, reason } });
    valid(r3.sarif);
    const result = results(r3).find((x) => x.partialFingerprints[SERVICE_KEY] === accepted.fingerprint)!;
    expect(result.baselineState).toBe('unchanged');
    expect(result.suppressions).toEqual([{ kind: 'external', status: 'accepted', justification: reason, properties: { suppressionId: suppression.id, expiresAt: accepted.suppressed!.expiresAt } }]);
    expect(results(r3).filter((x) => x.suppressions)).toHaveLength(1);
    expect(r3.stdout).not.toMatch(/::error title=shieldgate high%3A android\.test-only::/); // accepted: not annotated
    expect(section(r3.summary, /^#### Suppressed /)).toContain(`| high | \`android.test-only\` | Application is marked testOnly | ${reason} | ${accepted.suppressed!.expiresAt.slice(0, 10)} |`);
    expect(section(r3.summary, /^#### New /)).toContain('None.');

    // Build 4, 31 days on: the suppression has expired. The finding is back (counted again, so the grade drops), listed
    // as such; it is not new, so --fail-on-new still passes.
    h.clock.advance(31 * 86_400_000);
    const r4 = await step(BIN, upload(apk2, '2.4.4'), key);
    expect({ code: r4.code, stderr: r4.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    const scan4 = await scanOf(r4, key);
    expect(scan4.unsuppressed.map((f: { id: string }) => f.id)).toEqual(['android.test-only']);
    expect(scan4.score).toBeLessThan(scan3.score);
    expect(results(r4).filter((x) => x.suppressions)).toHaveLength(0);
    expect(section(r4.summary, /^#### Back after their suppression ended \(1\)$/)).toContain('| high | `android.test-only` |');
    expect(section(r4.summary, /^#### Existing /)).not.toContain('android.test-only');
    expect(r4.stdout).toMatch(/::error title=shieldgate high%3A android\.test-only::/);
  });

  it('passes fail-on-new through the bundled GitHub Action', async () => {
    const { appId } = await h.newApp();
    const { key } = await h.newKey(appId, ['builds:write', 'builds:read', 'scans:read'], 'live', { releaseBuilds: true });
    const inputs = (file: string, version: string) => ({ 'INPUT_SERVER-URL': h.baseUrl, 'INPUT_APP-ID': appId, INPUT_FILE: file, INPUT_PLATFORM: 'android', INPUT_VERSION: version, 'INPUT_FAIL-ON-NEW': 'high', 'INPUT_API-KEY': key });
    const [apk1, apk2] = await Promise.all([first(), second()]);
    const a1 = await step(ACTION, [], '', inputs(apk1, '1.0.0'));
    expect(a1.code).toBe(0);
    h.clock.advance(60_000);
    const a2 = await step(ACTION, [], '', inputs(apk2, '1.0.1'));
    expect(a2.code).toBe(2);
    expect(a2.stderr).toContain('android.test-only (--fail-on-new)');
    valid(a2.sarif);
    expect(results(a2).find((x) => x.ruleId === 'android.test-only')?.baselineState).toBe('new');
  });
});
