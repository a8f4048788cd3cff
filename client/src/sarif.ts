/**
 * SARIF 2.1.0 for GitHub code scanning: one rule per finding id (its fix as help), one result per finding located
 * on the app's manifest, and partial fingerprints that depend on the app, the platform, the finding id and its title,
 * so the same finding in the next upload is the same alert rather than a new one, and each instance of a rule (one per
 * insecure domain, say) is an alert of its own: dismissing one never hides another added later.
 * Text only, never Markdown: titles and fixes quote the package (a domain, a component name), and GitHub would render
 * a link written there on the repository's alert page.
 * Against the baseline (baseline.ts), a result carries `baselineState` (`new` or `unchanged`), the service's own
 * fingerprint, and an accepted external suppression with its reason. Fixed findings are not results: code scanning
 * closes an alert when the next upload of the same category no longer has it.
 */
import { createHash } from 'node:crypto';
import type { Finding, Scan } from './api';
import type { ComparedFinding, ComparedScan } from './baseline';
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

/** The service's fingerprint (rule and location, stable across builds of a package) under its own key. */
export const SERVICE_FINGERPRINT_KEY = 'shieldgate/v1';

const BASELINE_STATE = { new: 'new', existing: 'unchanged' } as const;

/**
 * What the service knows of a finding across builds: `baselineState` from its status (none when the scan was not
 * compared), its fingerprint, and an accepted external suppression carrying the reason a person recorded.
 */
function baselineProperties(f: ComparedFinding): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (f.status) out.baselineState = BASELINE_STATE[f.status];
  if (f.suppressed) {
    out.suppressions = [{ kind: 'external', status: 'accepted', justification: f.suppressed.reason, properties: { suppressionId: f.suppressed.id, expiresAt: f.suppressed.expiresAt } }];
  }
  return out;
}

export function toSarif(scan: ComparedScan, opts: SarifOptions): Record<string, unknown> {
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
    // The client's own fingerprint keeps the alerts made before the service fingerprinted findings.
    partialFingerprints: { 'shieldgateFinding/v2': fingerprint(scan, f), ...(f.fingerprint ? { [SERVICE_FINGERPRINT_KEY]: f.fingerprint } : {}) },
    ...baselineProperties(f),
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
        properties: { scanId: scan.id, grade: scan.grade, score: scan.score, signer: signerFacts(scan), baseline: scan.baseline ?? null, diff: scan.diff ?? null },
      },
    ],
  };
}
