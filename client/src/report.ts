/** What a person reads: the findings table in the log, the job summary, one annotation per serious finding. */
import type { Finding, Scan } from './api';
import { comparisonOf, findingSections, type ComparedScan, type FindingSuppression } from './baseline';
import { printable } from './log-text';
import { shortSha, signerFacts, signerScope } from './signer';

const SEVERITY_ORDER = ['critical', 'high', 'medium', 'low'] as const;

export function sortFindings<T extends Finding>(findings: T[]): T[] {
  return [...findings].sort((a, b) => SEVERITY_ORDER.indexOf(a.severity) - SEVERITY_ORDER.indexOf(b.severity) || a.id.localeCompare(b.id));
}

const clip = (text: string, width: number) => (text.length <= width ? text : `${text.slice(0, width - 1)}…`);
/** A cell of the table: one printable line (log-text.ts), clipped. */
const tableCell = (text: string, width: number) => clip(printable(text), width);

/** A plain-text table, each column as wide as its widest cell (the last one unpadded). */
function textTable(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const format = (row: string[]) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]))).join('  ');
  return [format(header), ...rows.map(format)];
}

/** A plain-text table (severity, id, title, fix), wide enough for a CI log. */
export function findingsTable(findings: Finding[]): string[] {
  if (findings.length === 0) return ['No findings.'];
  return textTable(['SEVERITY', 'ID', 'TITLE', 'FIX'], sortFindings(findings).map((f) => [printable(f.severity), printable(f.id), tableCell(f.title, 60), tableCell(f.fix, 90)]));
}

/** The scan's headline against its baseline: counts and the baseline's build, "no baseline yet", or nothing. */
export function diffLine(scan: ComparedScan): string {
  const comparison = comparisonOf(scan);
  if (comparison === 'first') return ', no baseline yet (the first static scan of this package)';
  if (comparison === 'none' || !scan.diff || !scan.baseline) return '';
  const d = scan.diff;
  return `: ${d.new} new, ${d.existing} existing, ${d.fixed} fixed since build ${printable(scan.baseline.buildId)}`;
}

/** The day a suppression ends, as the log and the summary show it. */
export const expiryDay = (s: FindingSuppression) => s.expiresAt.slice(0, 10);

/**
 * The findings table of the log, in the order a build's reader needs: new, fixed, back after an expired suppression,
 * existing, then suppressed (with reason and expiry). A scan the service did not compare and with nothing suppressed
 * is the one table it always was.
 */
export function findingsReport(scan: ComparedScan): string[] {
  const s = findingSections(scan);
  if (s.comparison === 'none' && s.suppressed.length === 0) return findingsTable(scan.findings);
  const since = s.baseline ? ` since build ${printable(s.baseline.buildId)}` : '';
  const lines: string[] = [];
  const section = (title: string, body: string[]) => lines.push('', `${title}:`, ...body.map((line) => `  ${line}`));
  if (s.comparison === 'baseline') {
    section(`New${since} (${s.new.length})`, s.new.length ? findingsTable(s.new) : ['None.']);
    section(`Fixed${since} (${s.fixed.length})`, s.fixed.length ? textTable(['ID', 'TITLE'], s.fixed.map((f) => [printable(f.id), tableCell(f.title, 90)])) : ['None.']);
  }
  if (s.cameBack.length) section(`Back after their suppression ended (${s.cameBack.length})`, findingsTable(s.cameBack));
  const existingTitle = s.comparison === 'baseline' ? 'Existing' : s.comparison === 'first' ? 'Findings (no baseline yet: this scan is the baseline of the next build)' : 'Findings (not compared with a baseline)';
  section(`${existingTitle} (${s.existing.length})`, s.existing.length ? findingsTable(s.existing) : ['None.']);
  if (s.suppressed.length) {
    const rows = sortFindings(s.suppressed).map((f) => [printable(f.severity), printable(f.id), tableCell(f.title, 60), tableCell(f.suppressed!.reason, 60), printable(expiryDay(f.suppressed!))]);
    section(`Suppressed (${s.suppressed.length})`, textTable(['SEVERITY', 'ID', 'TITLE', 'REASON', 'EXPIRES'], rows));
  }
  return lines.slice(1);
}

/**
 * Text of the summary, which GitHub renders as Markdown: titles and fixes quote the package (a domain key of an
 * Info.plist, say), so every character that could make a link, an image, HTML, emphasis or a table cell is escaped
 * and shows as itself.
 */
const MARKDOWN_SYNTAX = /[\\`*_[\]()!<>#|~&]/g;
const cell = (text: string) => printable(text).replace(MARKDOWN_SYNTAX, '\\$&');
/**
 * Inside a code span backslashes are literal, so a backtick (which would end it) is replaced; a `|` is escaped all
 * the same, as GitHub splits table rows on it before reading code spans.
 */
const code = (text: string) => printable(text).replace(/`/g, "'").replace(/\|/g, '\\|');

export interface SummaryGate {
  failUnder?: string;
  failOnNew?: string;
  passed: boolean;
  reason?: string;
  notes?: string[];
}

const findingRows = (findings: Finding[]) => [
  '| Severity | Id | Title | Fix |',
  '|---|---|---|---|',
  ...sortFindings(findings).map((f) => `| ${cell(f.severity)} | \`${code(f.id)}\` | ${cell(f.title)} | ${cell(f.fix)} |`),
];

/** The findings of the summary in the log's order (findingsReport), one Markdown table per section. */
function findingSectionsMarkdown(scan: ComparedScan): string[] {
  const s = findingSections(scan);
  if (s.comparison === 'none' && s.suppressed.length === 0) return scan.findings.length ? findingRows(scan.findings) : ['No findings.'];
  const since = s.baseline ? ` since build \`${code(s.baseline.buildId)}\`` : '';
  const lines: string[] = [];
  const section = (title: string, body: string[]) => lines.push('', `#### ${title}`, '', ...body);
  if (s.comparison === 'baseline') {
    section(`New${since} (${s.new.length})`, s.new.length ? findingRows(s.new) : ['None.']);
    const fixed = ['| Id | Title |', '|---|---|', ...s.fixed.map((f) => `| \`${code(f.id)}\` | ${cell(f.title)} |`)];
    section(`Fixed${since} (${s.fixed.length})`, s.fixed.length ? fixed : ['None.']);
  }
  if (s.cameBack.length) section(`Back after their suppression ended (${s.cameBack.length})`, findingRows(s.cameBack));
  const existingTitle = s.comparison === 'baseline' ? 'Existing' : s.comparison === 'first' ? 'Findings (no baseline yet: this scan is the baseline of the next build)' : 'Findings (not compared with a baseline)';
  section(`${existingTitle} (${s.existing.length})`, s.existing.length ? findingRows(s.existing) : ['None.']);
  if (s.suppressed.length) {
    const rows = sortFindings(s.suppressed).map((f) => `| ${cell(f.severity)} | \`${code(f.id)}\` | ${cell(f.title)} | ${cell(f.suppressed!.reason)} | ${cell(expiryDay(f.suppressed!))} |`);
    section(`Suppressed (${s.suppressed.length})`, ['| Severity | Id | Title | Reason | Expires |', '|---|---|---|---|---|', ...rows]);
  }
  return lines.slice(1);
}

function gateLine(gate: SummaryGate): string | null {
  const asked = [gate.failUnder && `fail under ${cell(gate.failUnder)}`, gate.failOnNew && `fail on new ${cell(gate.failOnNew)} or above`].filter(Boolean);
  if (!gate.passed) return `**Gate failed**: ${cell(gate.reason ?? '')}.`;
  return asked.length ? `Gate passed (${asked.join('; ')}).` : null;
}

/** Markdown for $GITHUB_STEP_SUMMARY. */
export function summaryMarkdown(scan: ComparedScan, buildId: string, gate: SummaryGate): string {
  const lines = [
    `### shieldgate: grade ${scan.grade} (score ${scan.score})`,
    '',
    `Build \`${code(buildId)}\`, scan \`${code(scan.id)}\` (${cell(scan.engine)}) of ${cell(scan.target.name)} ${cell(scan.target.version ?? '')}.`,
  ];
  const signer = signerLine(scan, (sha) => `\`${code(sha)}\``, cell);
  if (signer) lines.push('', signer);
  const verdict = gateLine(gate);
  if (verdict) lines.push('', verdict);
  for (const note of gate.notes ?? []) lines.push('', `Note: ${cell(note)}.`);
  lines.push('', ...findingSectionsMarkdown(scan));
  return lines.join('\n') + '\n';
}

export const isSerious = (f: Finding) => f.severity === 'high' || f.severity === 'critical';

/**
 * One line naming who signed the package, or null when the scan says nothing of it (a preview, an unreadable package,
 * an older server). `sha` formats the digest and `text` the certificate's subject, which the package chose.
 */
export function signerLine(scan: Pick<Scan, 'signing'>, sha: (text: string) => string = (t) => t, text: (t: string) => string = printable): string | null {
  const facts = signerFacts(scan);
  if (!facts) return null;
  const who = facts.sha256 ? `${sha(shortSha(facts.sha256))}${facts.subject ? ` (${text(facts.subject)})` : ''}` : 'no certificate';
  return `Signed by ${who}, ${text(signerScope(facts))}: ${facts.verified ? 'signature verified' : 'signature NOT verified'}.`;
}
