// shieldgate-ci against a scan's baseline: --fail-on-new (what counts as new with a baseline, on the first scan of a
// package and on a scan the service did not compare; suppressed findings never fail; combined with --fail-under),
// SARIF baselineState, fingerprints and suppressions valid against the SARIF 2.1.0 schema (@microsoft/jest-sarif),
// and the log and job summary listing new, fixed, back, existing and suppressed findings in that order.
import '@microsoft/jest-sarif';
import { evaluateGate } from '../../client/src/gate';
import { comparisonOf, findingSections, type ComparedFinding, type ComparedScan } from '../../client/src/baseline';
import { SERVICE_FINGERPRINT_KEY, toSarif } from '../../client/src/sarif';
import { diffLine, findingsReport, summaryMarkdown } from '../../client/src/report';
import { main } from '../../client/src/cli';
import { PassThrough } from 'node:stream';

type Severity = ComparedFinding['severity'];
const fp = (name: string) => name.padEnd(64, '0').replace(/[^0-9a-f]/g, 'a');
const finding = (id: string, severity: Severity, status: ComparedFinding['status'], suppressed: ComparedFinding['suppressed'] = null): ComparedFinding => ({
  id,
  severity,
  title: `title of ${id}`,
  detail: `detail of ${id}`,
  fix: `fix of ${id}`,
  fingerprint: status === null ? null : fp(id),
  status,
  suppressed,
});
const accepted = { id: 'sup_partner', reason: "Partner's test server, until it moves to HTTPS", expiresAt: '2027-03-01T00:00:00.000Z' };
const BASELINE = { scanId: 'scn_base', buildId: 'bld_base' };

function scan(findings: ComparedFinding[], extra: Partial<ComparedScan> = {}, grade = 'B'): ComparedScan {
  const counts = { new: findings.filter((f) => f.status === 'new').length, existing: findings.filter((f) => f.status === 'existing').length, fixed: extra.fixedFindings?.length ?? 0 };
  return {
    id: 'scn_now',
    appId: 'app_abcdef',
    engine: 'static',
    grade: grade as ComparedScan['grade'],
    score: 80,
    target: { platform: 'android', name: 'com.example.app', version: '2.4.2' },
    signing: null,
    inventory: null,
    createdAt: new Date(0).toISOString(),
    findings,
    baseline: BASELINE,
    diff: counts,
    fixedFindings: [],
    unsuppressed: [],
    ...extra,
  } as ComparedScan;
}
/** The first static scan of a package: the service marks every finding new and has no baseline. */
const firstScan = (findings: ComparedFinding[]) => scan(findings, { baseline: null, diff: { new: findings.length, existing: 0, fixed: 0 } });
/** An older service: none of the fields exist. */
function olderService(findings: ComparedFinding[]): ComparedScan {
  const s: Record<string, unknown> = { ...scan([]), findings: findings.map(({ fingerprint: _f, status: _s, suppressed: _u, ...rest }) => rest) };
  for (const field of ['baseline', 'diff', 'fixedFindings', 'unsuppressed']) delete s[field];
  return s as ComparedScan;
}

describe('--fail-on-new', () => {
  it('fails on a new unsuppressed finding at or above the severity, and names it and the gate', () => {
    const s = scan([finding('android.test-only', 'high', 'new'), finding('android.allow-backup', 'medium', 'new'), finding('android.cleartext-traffic', 'high', 'existing')]);
    expect(evaluateGate(s, { failOnNew: 'high' })).toEqual({
      passed: false,
      analysed: true,
      failed: ['fail-on-new'],
      reason: '1 new finding(s) at or above high: android.test-only (--fail-on-new)',
      notes: [],
    });
    expect(evaluateGate(s, { failOnNew: 'critical' }).passed).toBe(true);
    expect(evaluateGate(s, { failOnNew: 'medium' }).reason).toBe('2 new finding(s) at or above medium: android.test-only, android.allow-backup (--fail-on-new)');
    expect(evaluateGate(s, { failOnNew: 'low' }).passed).toBe(false);
  });

  it('never fails on a suppressed finding, new or not', () => {
    const s = scan([finding('android.test-only', 'critical', 'new', accepted), finding('android.cleartext-traffic', 'high', 'existing', accepted)]);
    expect(evaluateGate(s, { failOnNew: 'low' })).toMatchObject({ passed: true, failed: [] });
  });

  it('passes existing findings, and a finding back after its suppression expired (it is not new; its grade penalty is back)', () => {
    const back = finding('android.allow-backup', 'high', 'existing');
    const s = scan([finding('android.cleartext-traffic', 'critical', 'existing'), back], { unsuppressed: [{ id: back.id, fingerprint: back.fingerprint!, title: back.title }] });
    expect(evaluateGate(s, { failOnNew: 'low' }).passed).toBe(true);
  });

  it('fails nothing on the first scan of a package (it becomes the baseline) and says so', () => {
    const gate = evaluateGate(firstScan([finding('android.cleartext-traffic', 'high', 'new'), finding('android.allow-backup', 'medium', 'new')]), { failOnNew: 'medium' });
    expect(gate).toMatchObject({ passed: true, failed: [] });
    expect(gate.notes).toEqual([expect.stringMatching(/^--fail-on-new: no baseline yet .*baseline of the next build \(2 unsuppressed finding\(s\) at or above medium now\)$/)]);
  });

  it('counts every unsuppressed finding as new on a scan the service did not compare (an older service or scan)', () => {
    const old = olderService([finding('android.cleartext-traffic', 'high', null)]);
    expect(comparisonOf(old)).toBe('none');
    expect(evaluateGate(old, { failOnNew: 'high' })).toMatchObject({ passed: false, failed: ['fail-on-new'], notes: [expect.stringMatching(/did not compare/)] });
    // A scan stored before fingerprints on a service that has them: every field null.
    const stored = scan([finding('android.cleartext-traffic', 'high', null)], { baseline: null, diff: null });
    expect(comparisonOf(stored)).toBe('none');
    expect(evaluateGate(stored, { failOnNew: 'high' }).passed).toBe(false);
  });

  it('combines with --fail-under: either failing fails, and the reason names each gate that failed', () => {
    const s = scan([finding('android.test-only', 'high', 'new')], {}, 'C');
    expect(evaluateGate(s, { failUnder: 'B', failOnNew: 'high' })).toMatchObject({
      passed: false,
      failed: ['fail-under', 'fail-on-new'],
      reason: 'grade C is under B (--fail-under); 1 new finding(s) at or above high: android.test-only (--fail-on-new)',
    });
    expect(evaluateGate(s, { failUnder: 'C', failOnNew: 'high' }).failed).toEqual(['fail-on-new']);
    expect(evaluateGate(s, { failUnder: 'B', failOnNew: 'critical' }).failed).toEqual(['fail-under']);
    expect(evaluateGate(s, { failUnder: 'C', failOnNew: 'critical' }).passed).toBe(true);
  });

  it('refuses a severity it does not know with one line and exit 1, before anything is sent', async () => {
    let err = '';
    const stderr = new PassThrough().on('data', (chunk) => (err += chunk));
    const argv = ['upload', '--app', 'app_abcdef', '--file', __filename, '--platform', 'android', '--version', '1', '--fail-on-new', 'severe'];
    // Nothing listens on port 9: a request would end in a network error, not this usage error.
    const code = await main(argv, { env: { SHIELDGATE_URL: 'http://127.0.0.1:9' }, stdout: new PassThrough(), stderr, tty: false });
    expect({ code, err }).toEqual({ code: 1, err: 'shieldgate-ci: --fail-on-new must be one of low, medium, high, critical, not "severe"\n' });
  });

  it('still fails a scan that could not analyse its package, whatever is new', () => {
    expect(evaluateGate(firstScan([finding('package.unreadable', 'high', 'new')]), { failOnNew: 'critical' })).toMatchObject({ passed: false, analysed: false });
  });
});

describe('SARIF against the baseline', () => {
  const opts = { manifestPath: 'app/src/main/AndroidManifest.xml', toolVersion: '1.0.0', informationUri: 'https://x' };
  const results = (s: ComparedScan) => (toSarif(s, opts) as any).runs[0].results as Array<Record<string, any>>;
  const byRule = (s: ComparedScan) => Object.fromEntries(results(s).map((r) => [r.ruleId, r]));

  it('marks results new or unchanged, carries the service fingerprint, and an accepted external suppression with its reason', () => {
    const s = scan([finding('android.test-only', 'high', 'new'), finding('android.cleartext-traffic', 'high', 'existing'), finding('android.allow-backup', 'medium', 'existing', accepted)]);
    const log = toSarif(s, opts);
    (expect(log) as unknown as { toBeValidSarifLog(): void }).toBeValidSarifLog();
    const r = byRule(s);
    expect(r['android.test-only'].baselineState).toBe('new');
    expect(r['android.cleartext-traffic'].baselineState).toBe('unchanged');
    expect(r['android.test-only'].partialFingerprints[SERVICE_FINGERPRINT_KEY]).toBe(fp('android.test-only'));
    expect(r['android.test-only'].partialFingerprints['shieldgateFinding/v2']).toMatch(/^[0-9a-f]{64}$/);
    expect(r['android.allow-backup'].suppressions).toEqual([
      { kind: 'external', status: 'accepted', justification: accepted.reason, properties: { suppressionId: accepted.id, expiresAt: accepted.expiresAt } },
    ]);
    expect(r['android.test-only']).not.toHaveProperty('suppressions');
    expect((log as any).runs[0].properties).toMatchObject({ baseline: BASELINE, diff: { new: 1, existing: 2, fixed: 0 } });
  });

  it('has no baselineState, service fingerprint or suppression where the service gave none, and stays valid', () => {
    const old = olderService([finding('android.cleartext-traffic', 'high', null)]);
    (expect(toSarif(old, opts)) as unknown as { toBeValidSarifLog(): void }).toBeValidSarifLog();
    const [r] = results(old);
    expect(r).not.toHaveProperty('baselineState');
    expect(r).not.toHaveProperty('suppressions');
    expect(Object.keys(r.partialFingerprints)).toEqual(['shieldgateFinding/v2']);
  });
});

describe('the log and the job summary against the baseline', () => {
  const fixed = { id: 'android.min-sdk', fingerprint: fp('android.min-sdk'), title: 'Minimum SDK allows outdated Android versions' };
  const back = finding('android.allow-backup', 'medium', 'existing');
  const s = scan(
    [finding('android.cleartext-traffic', 'high', 'existing'), back, finding('android.test-only', 'high', 'new'), finding('ios.ats-x', 'low', 'existing', accepted)],
    { fixedFindings: [fixed], unsuppressed: [{ id: back.id, fingerprint: back.fingerprint!, title: back.title }] },
  );

  it('puts each finding in one section: new, fixed, back, existing, suppressed', () => {
    const sections = findingSections(s);
    expect(sections.new.map((f) => f.id)).toEqual(['android.test-only']);
    expect(sections.fixed).toEqual([fixed]);
    expect(sections.cameBack.map((f) => f.id)).toEqual(['android.allow-backup']);
    expect(sections.existing.map((f) => f.id)).toEqual(['android.cleartext-traffic']);
    expect(sections.suppressed.map((f) => f.id)).toEqual(['ios.ats-x']);
  });

  it('prints the sections in that order in the log, with the suppression\'s reason and expiry day', () => {
    const text = findingsReport(s).join('\n');
    const order = ['New since build bld_base (1):', 'android.test-only', 'Fixed since build bld_base (1):', 'android.min-sdk', 'Back after their suppression ended (1):', 'android.allow-backup', 'Existing (1):', 'android.cleartext-traffic', 'Suppressed (1):', 'ios.ats-x'];
    const positions = order.map((part) => text.indexOf(part));
    expect(positions.every((p) => p >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    expect(text).toMatch(/ios\.ats-x .*Partner's test server, until it moves to HTTPS\s+2027-03-01$/m);
    expect(diffLine(s)).toBe(': 1 new, 3 existing, 1 fixed since build bld_base');
  });

  it('writes the same order in the summary, one Markdown table per section, and the gate that failed', () => {
    const gate = evaluateGate(s, { failOnNew: 'high' });
    const md = summaryMarkdown(s, 'bld_now', { failOnNew: 'high', ...gate });
    const headings = md.split('\n').filter((l) => l.startsWith('#### '));
    expect(headings).toEqual([
      '#### New since build `bld_base` (1)',
      '#### Fixed since build `bld_base` (1)',
      '#### Back after their suppression ended (1)',
      '#### Existing (1)',
      '#### Suppressed (1)',
    ]);
    expect(md).toContain('**Gate failed**: 1 new finding\\(s\\) at or above high: android.test-only \\(--fail-on-new\\).');
    expect(md).toContain('| `android.min-sdk` | Minimum SDK allows outdated Android versions |');
    expect(md).toContain("| low | `ios.ats-x` | title of ios.ats-x | Partner's test server, until it moves to HTTPS | 2027-03-01 |");
  });

  it('escapes a suppression reason as text in the summary and keeps its log line one line', () => {
    const hostile = { ...accepted, reason: 'ok [link](https://evil.example)\n::error::x | y' };
    const t = scan([finding('android.allow-backup', 'medium', 'existing', hostile)]);
    expect(summaryMarkdown(t, 'bld_now', { passed: true })).toContain('| ok \\[link\\]\\(https://evil.example\\) ::error::x \\| y | 2027-03-01 |');
    expect(findingsReport(t).some((l) => /[\r\n]/.test(l) || l.startsWith('::'))).toBe(false);
  });

  it('says there is no baseline yet on the first scan, and is the one plain table for a service older than baselines', () => {
    const first = firstScan([finding('android.cleartext-traffic', 'high', 'new')]);
    expect(findingsReport(first)[0]).toBe('Findings (no baseline yet: this scan is the baseline of the next build) (1):');
    expect(diffLine(first)).toBe(', no baseline yet (the first static scan of this package)');
    const old = olderService([finding('android.cleartext-traffic', 'high', null)]);
    expect(findingsReport(old)[0]).toMatch(/^SEVERITY\s+ID\s+TITLE\s+FIX$/);
    expect(diffLine(old)).toBe('');
    expect(summaryMarkdown(old, 'bld_now', { passed: true })).not.toContain('####');
  });
});
