// shieldgate-ci's pure rules: claims decoded locally and the trust rule suggested from them, the gate (grades and
// packages that could not be analysed), the Idempotency-Key of a run, SARIF rules and stable fingerprints, CI progress
// lines every 10 %, GitHub output files in the delimiter form, and the signer named in SARIF and the job summary.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { decodeRuleClaims, suggestRule } from '../../client/src/claims';
import { evaluateGate } from '../../client/src/gate';
import { gradeBelow } from '../../client/src/grades';
import { idempotencyKey } from '../../client/src/commit';
import { fingerprint, toSarif } from '../../client/src/sarif';
import { createProgress } from '../../client/src/progress';
import { setOutputs } from '../../client/src/github';
import type { Scan } from '../../client/src/api';
import { jsonLine, printable } from '../../client/src/log-text';
import { findingsTable, signerLine, summaryMarkdown } from '../../client/src/report';

const jws = (payload: unknown) => `${Buffer.from('{"alg":"RS256"}').toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.c2ln`;

function scan(findings: Scan['findings'], grade = 'B', appId = 'app_abcdef'): Scan {
  return { id: 'scn_x', appId, engine: 'static', grade: grade as Scan['grade'], score: 85, target: { platform: 'android', name: 'x', version: '1' }, findings, signing: null, inventory: null, createdAt: new Date(0).toISOString() } as Scan;
}
const finding = (id: string, severity: 'low' | 'medium' | 'high' | 'critical' = 'high') => ({ id, severity, title: `t ${id}`, detail: 'd', fix: `fix ${id}` }) as Scan['findings'][number];

describe('claims of a refused job', () => {
  it('decodes only the claims rules look at, and suggests a rule written with names for an immutable subject', () => {
    const claims = decodeRuleClaims(jws({ sub: 'repo:acme@4242/mobile-app@123:ref:refs/heads/main', repository: 'acme/mobile-app', repository_id: '123', repository_owner_id: '4242', job_workflow_ref: 'acme/mobile-app/.github/workflows/r.yml@refs/heads/main', secret: 'x' }))!;
    expect(claims).not.toHaveProperty('secret');
    expect(suggestRule(claims)).toEqual({
      subjectPattern: 'repo:acme/mobile-app:ref:refs/heads/main',
      workflowRef: 'acme/mobile-app/.github/workflows/r.yml@refs/heads/main',
      repositoryId: '123',
      repositoryOwnerId: '4242',
      scopes: ['builds:write', 'builds:read', 'scans:read'],
    });
  });
  it('suggests no rule for pull_request jobs and decodes nothing from a non-JWS', () => {
    expect(suggestRule({ sub: 'repo:a/b:pull_request', repository: 'a/b', event_name: 'pull_request' })).toBeNull();
    expect(decodeRuleClaims('not-a-token')).toBeNull();
  });
});

describe('gate', () => {
  it('fails under the floor and passes at or above it', () => {
    expect(gradeBelow('B', 'B')).toBe(false);
    expect(gradeBelow('B-', 'B')).toBe(true);
    expect(gradeBelow('A+', 'F')).toBe(false);
    expect(evaluateGate(scan([], 'C'), 'B')).toEqual({ passed: false, analysed: true, failed: ['fail-under'], reason: 'grade C is under B (--fail-under)', notes: [] });
    expect(evaluateGate(scan([], 'A'), 'B')).toEqual({ passed: true, analysed: true, failed: [], notes: [] });
  });
  it('fails a scan that could not analyse its package, with or without a floor', () => {
    expect(evaluateGate(scan([finding('scan.incomplete')], 'F'), undefined)).toMatchObject({ passed: false, analysed: false });
    expect(evaluateGate(scan([finding('package.unreadable')], 'F'), 'F').reason).toMatch(/could not be analysed/);
  });
});

describe('Idempotency-Key', () => {
  const sha = 'ab'.repeat(32);
  it('is derived from the run, its attempt and the file hash, within the contract pattern', () => {
    const key = idempotencyKey({ GITHUB_RUN_ID: '9876543210', GITHUB_RUN_ATTEMPT: '2' }, sha)!;
    expect(key).toBe(`sgci.9876543210.2.${sha}`);
    expect(key).toMatch(/^[A-Za-z0-9_.:-]{8,128}$/);
    expect(idempotencyKey({ GITHUB_RUN_ID: '9876543210', GITHUB_RUN_ATTEMPT: '3' }, sha)).not.toBe(key);
  });
  it('is absent outside a run', () => {
    expect(idempotencyKey({}, sha)).toBeUndefined();
  });
});

describe('SARIF', () => {
  it('has one rule per finding id with the fix as help (text, never Markdown), and fingerprints independent of the scan', () => {
    const log = toSarif(scan([finding('a.one'), finding('a.one', 'low'), finding('b.two', 'medium')]), { manifestPath: 'm.xml', toolVersion: '1.0.0', informationUri: 'https://x' }) as any;
    expect(log.runs[0].tool.driver.rules.map((r: { id: string }) => r.id)).toEqual(['a.one', 'b.two']);
    expect(log.runs[0].tool.driver.rules[0].help).toEqual({ text: 'fix a.one' }); // a link in it would render on GitHub
    expect(log.runs[0].results).toHaveLength(3);
    const later: Scan = { ...scan([], 'F'), id: 'scn_other' };
    expect(fingerprint(scan([], 'A'), finding('a.one'))).toBe(fingerprint(later, finding('a.one')));
    expect(fingerprint(scan([]), finding('a.one'))).not.toBe(fingerprint(scan([], 'B', 'app_other'), finding('a.one')));
  });
  it('gives each instance of a rule its own fingerprint, so dismissing one alert never hides another', () => {
    const insecure = (domain: string) => ({ ...finding('ios.ats-insecure-http-domain'), title: `Plain HTTP allowed for ${domain}` });
    expect(fingerprint(scan([]), insecure('legacy.example.com'))).not.toBe(fingerprint(scan([]), insecure('exfil.example.net')));
  });
});

describe('the signer of the package', () => {
  const sha = '3b1ed3e0b7ac5a52c0d0b5d0ef8d2bb4d1b9b2b3a0f4e5c6d7e8f9a0b1c2d3e4';
  const android = (verified: boolean, subject = 'CN=Example Release,O=Example Corp'): Scan => ({
    ...scan([]),
    signing: { verified, schemes: verified ? ['v2', 'v3'] : [], signers: [{ sha256: sha, subject, notAfter: '2050-01-01T00:00:00Z', keyAlgorithm: 'RSA', keyBits: 3072 }], lineage: [] },
  });
  const ios: Scan = { ...scan([]), target: { platform: 'ios', name: 'x', version: '1' }, signing: { verified: true, teamId: 'ABCDE12345', signers: [{ sha256: sha, subject: 'OU=ABCDE12345', notAfter: '2050-01-01T00:00:00Z' }] } };
  const opts = { manifestPath: 'm.xml', toolVersion: '1.0.0', informationUri: 'https://x' };

  it('is a property of the SARIF run: digest, subject, schemes or team, verified', () => {
    expect((toSarif(android(true), opts) as any).runs[0].properties.signer).toEqual({ verified: true, sha256: sha, subject: 'CN=Example Release,O=Example Corp', schemes: ['v2', 'v3'] });
    expect((toSarif(ios, opts) as any).runs[0].properties.signer).toEqual({ verified: true, sha256: sha, subject: 'OU=ABCDE12345', teamId: 'ABCDE12345' });
    expect((toSarif(scan([]), opts) as any).runs[0].properties.signer).toBeNull();
  });

  it('is one line of the job summary, its subject escaped; nothing when the scan names no signer (a preview, an older server)', () => {
    const summary = summaryMarkdown(android(true), 'bld_1', { passed: true });
    expect(summary).toContain(`Signed by \`${sha.slice(0, 16)}…\` (CN=Example Release,O=Example Corp), schemes v2, v3: signature verified.`);
    const hostile = summaryMarkdown(android(false, 'CN=[x](https://evil.example)\n# big'), 'bld_1', { passed: true });
    expect(hostile).toContain('(CN=\\[x\\]\\(https://evil.example\\) \\# big), no scheme verified: signature NOT verified.');
    expect(summaryMarkdown(ios, 'bld_1', { passed: true })).toContain('team ABCDE12345: signature verified.');
    expect(summaryMarkdown(scan([]), 'bld_1', { passed: true })).not.toContain('Signed by');
    const older = { ...scan([]) } as Partial<Scan>;
    delete older.signing;
    expect(signerLine(older as Scan)).toBeNull();
  });
});

describe('progress in a CI log', () => {
  it('prints a plain line at each 10 %', () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (chunk) => (text += chunk));
    const progress = createProgress(1000, out, false);
    progress.start();
    for (let i = 0; i < 100; i++) progress.advance(10);
    progress.done();
    const lines = text.trim().split('\n');
    expect(lines).toHaveLength(11); // 0 %, 10 %, ... 100 %
    expect(lines.at(-1)).toMatch(/^upload 100% /);
    expect(text).not.toContain('\r');
  });
});

describe('GitHub outputs', () => {
  it('are written in the delimiter form', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gh-out-')), 'output');
    setOutputs({ GITHUB_OUTPUT: file }, { grade: 'B+', 'build-id': 'bld_1' });
    expect(fs.readFileSync(file, 'utf8')).toMatch(/^grade<<(ghadelimiter_[0-9a-f-]+)\nB\+\n\1\nbuild-id<<(ghadelimiter_[0-9a-f-]+)\nbld_1\n\2\n$/);
  });
});

describe('text from the service in a CI log', () => {
  // A domain in the package's network rules, written to break out of its line (CONTRACT: titles quote the package).
  const hostile = { ...finding('ios.ats-insecure-http-domain'), title: 'Plain HTTP allowed for x.example\n::error::fake\r::add-mask::grade', fix: 'Enable HTTPS on ##[stop-commands]x' };

  it('prints one line per finding, where no line starts a workflow command and no ##[ remains', () => {
    const lines = findingsTable([hostile]).join('\n').split(/\r|\n/);
    expect(lines).toHaveLength(2); // header and the one finding
    expect(lines.some((l) => l.startsWith('::'))).toBe(false);
    expect(lines.join('\n')).not.toContain('##[');
    expect(printable('a\u001b[31mred\u2028b')).toBe('a [31mred b');
  });

  it('writes --json lines whose value is unchanged and that carry neither a line break nor ##[', () => {
    const line = jsonLine({ findings: [hostile] });
    expect(line.endsWith('\n')).toBe(true);
    expect(line.slice(0, -1)).not.toMatch(/[\r\n]|##\[/);
    expect(JSON.parse(line)).toEqual({ findings: [hostile] });
  });

  it('keeps a summary table row on one line', () => {
    const markdown = summaryMarkdown(scan([hostile]), 'bld_1', { passed: true });
    expect(markdown.split('\n').filter((l) => l.startsWith('| high'))).toHaveLength(1);
    expect(markdown).not.toContain('\r');
  });

  // A bare https:// or www. text still becomes a link on GitHub (its autolinks), but one that shows where it goes.
  it('shows a package\'s Markdown in the summary as text: no disguised link, image, HTML or emphasis of its making', () => {
    const linked = { ...finding('ios.ats-insecure-http-domain'), title: 'Plain HTTP allowed for [Click here](https://evil.example) ![](https://tracker.example/p.png)', fix: '<img src=x> **now** `x` | y' };
    const row = summaryMarkdown(scan([linked]), 'bld_1', { passed: true }).split('\n').find((l) => l.startsWith('| high'))!;
    expect(row).toBe(
      '| high | `ios.ats-insecure-http-domain` | Plain HTTP allowed for \\[Click here\\]\\(https://evil.example\\) \\!\\[\\]\\(https://tracker.example/p.png\\) | \\<img src=x\\> \\*\\*now\\*\\* \\`x\\` \\| y |',
    );
  });
});
