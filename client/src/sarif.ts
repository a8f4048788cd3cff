/**
 * SARIF 2.1.0 for GitHub code scanning: one rule per finding id (its fix as help), one result per finding located
 * on the app's manifest, and partial fingerprints that depend on the app, the platform, the finding id and its title,
 * so the same finding in the next upload is the same alert rather than a new one, and each instance of a rule (one per
 * insecure domain, say) is an alert of its own: dismissing one never hides another added later.
 * Text only, never Markdown: titles and fixes quote the package (a domain, a component name), and GitHub would render
 * a link written there on the repository's alert page.
 */
import { createHash } from 'node:crypto';
import type { Finding, Scan } from './api';
import { sortFindings } from './report';
import { signerFacts } from './signer';

const LEVELS: Record<Finding['severity'], 'error' | 'warning' | 'note'> = { critical: 'error', high: 'error', medium: 'warning', low: 'note' };
// GitHub orders code-scanning alerts by this number (0.0 to 10.0).
const SECURITY_SEVERITY: Record<Finding['severity'], string> = { critical: '9.5', high: '8.0', medium: '5.5', low: '2.0' };

export const DEFAULT_MANIFEST: Record<'android' | 'ios', string> = {
  android: 'app/src/main/AndroidManifest.xml',
  ios: 'ios/Info.plist',
};

export interface SarifOptions {
  manifestPath: string;
  toolVersion: string;
  informationUri: string;
}

export function fingerprint(scan: Pick<Scan, 'appId' | 'target'>, finding: Pick<Finding, 'id' | 'title'>): string {
  return createHash('sha256').update(`${scan.appId}\u0000${scan.target.platform}\u0000${finding.id}\u0000${finding.title}`).digest('hex');
}

export function toSarif(scan: Scan, opts: SarifOptions): Record<string, unknown> {
  const findings = sortFindings(scan.findings);
  const ruleIds = [...new Set(findings.map((f) => f.id))];
  const rules = ruleIds.map((id) => {
    const f = findings.find((finding) => finding.id === id)!;
    return {
      id,
      name: id.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : '')),
      shortDescription: { text: f.title },
      fullDescription: { text: f.detail },
      help: { text: f.fix },
      defaultConfiguration: { level: LEVELS[f.severity] },
      properties: { tags: ['security', 'mobile', scan.target.platform], 'security-severity': SECURITY_SEVERITY[f.severity] },
    };
  });
  const results = findings.map((f) => ({
    ruleId: f.id,
    ruleIndex: ruleIds.indexOf(f.id),
    level: LEVELS[f.severity],
    message: { text: `${f.title}. ${f.detail}` },
    locations: [{ physicalLocation: { artifactLocation: { uri: opts.manifestPath, uriBaseId: '%SRCROOT%' }, region: { startLine: 1 } } }],
    partialFingerprints: { 'shieldgateFinding/v2': fingerprint(scan, f) },
  }));
  return {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: { driver: { name: 'shieldgate', version: opts.toolVersion, informationUri: opts.informationUri, rules } },
        automationDetails: { id: `shieldgate/${scan.target.platform}/` },
        results,
        // Who signed the package (null when the scan does not say): code scanning keeps it with the run.
        properties: { scanId: scan.id, grade: scan.grade, score: scan.score, signer: signerFacts(scan) },
      },
    ],
  };
}
