/** What a person reads: the findings table in the log, the job summary, one annotation per serious finding. */
import type { Finding, Scan } from './api';
import { printable } from './log-text';
import { shortSha, signerFacts, signerScope } from './signer';

const SEVERITY_ORDER = ['critical', 'high', 'medium', 'low'] as const;

export function sortFindings(findings: Finding[]): Finding[] {
  return [...findings].sort((a, b) => SEVERITY_ORDER.indexOf(a.severity) - SEVERITY_ORDER.indexOf(b.severity) || a.id.localeCompare(b.id));
}

const clip = (text: string, width: number) => (text.length <= width ? text : `${text.slice(0, width - 1)}…`);
/** A cell of the table: one printable line (log-text.ts), clipped. */
const tableCell = (text: string, width: number) => clip(printable(text), width);

/** A plain-text table (severity, id, title, fix), wide enough for a CI log. */
export function findingsTable(findings: Finding[]): string[] {
  if (findings.length === 0) return ['No findings.'];
  const rows = sortFindings(findings).map((f) => [printable(f.severity), printable(f.id), tableCell(f.title, 60), tableCell(f.fix, 90)]);
  const header = ['SEVERITY', 'ID', 'TITLE', 'FIX'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const format = (row: string[]) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]))).join('  ');
  return [format(header), ...rows.map(format)];
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

/** Markdown for $GITHUB_STEP_SUMMARY. */
export function summaryMarkdown(scan: Scan, buildId: string, gate: { failUnder?: string; passed: boolean; reason?: string }): string {
  const lines = [
    `### shieldgate: grade ${scan.grade} (score ${scan.score})`,
    '',
    `Build \`${code(buildId)}\`, scan \`${code(scan.id)}\` (${cell(scan.engine)}) of ${cell(scan.target.name)} ${cell(scan.target.version ?? '')}.`,
  ];
  const signer = signerLine(scan, (sha) => `\`${code(sha)}\``, cell);
  if (signer) lines.push('', signer);
  if (gate.failUnder) lines.push('', gate.passed ? `Gate passed (fail under ${gate.failUnder}).` : `**Gate failed**: ${gate.reason}.`);
  lines.push('');
  if (scan.findings.length === 0) lines.push('No findings.');
  else {
    lines.push('| Severity | Id | Title | Fix |', '|---|---|---|---|');
    for (const f of sortFindings(scan.findings)) lines.push(`| ${cell(f.severity)} | \`${code(f.id)}\` | ${cell(f.title)} | ${cell(f.fix)} |`);
  }
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
