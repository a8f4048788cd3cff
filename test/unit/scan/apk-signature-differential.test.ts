// Protects: the APK signature verdict is apksigner's. Every APK of the signing corpus (signed by apksigner with every
// key type and scheme it offers, lineage, two signers, minSdk variants, and copies broken after signing) is verified by
// `apksigner verify` here, and verifyApk and the static analysis must reach the same verdict: verified or not, the
// schemes apksigner prints as verified, the certificates --print-certs prints; a rejected APK is
// android.signature-invalid, an accepted one carries no signature finding.
import { createHash } from 'node:crypto';
import { analyzePackage } from '../../../src/scan/static/analyze-package';
import type { ApkVerification } from '../../../src/scan/static/signing/apk-verification';
import { isMalformedApk, verifyApk } from '../../../src/scan/static/signing/apk-verifier';
import { type CorpusFixture, type SigningCorpus, baseOf, plannedFixtureNames, signingCorpus } from '../../fixtures/signing-corpus';
import { type ApksignerVerdict, apksignerVerdict, describeVerdict } from '../../support/apksigner-verdict';

jest.setTimeout(120_000);

const NAMES = plannedFixtureNames();
const SIGNATURE_FINDINGS = ['android.signature-invalid', 'android.signature-corrupt', 'android.unsigned'];

let corpus: SigningCorpus;
const verdicts = new Map<string, ApksignerVerdict>();
const tally = { verifier: 0, analysis: 0, analysed: 0, accepted: 0, rejected: 0, refused: 0, disagreements: [] as string[] };

beforeAll(async () => {
  corpus = await signingCorpus();
  // apksigner's verdicts up front, two JVMs at a time (the tests then run one by one).
  const queue = [...corpus.fixtures];
  const worker = async () => {
    for (let f = queue.shift(); f; f = queue.shift()) verdicts.set(f.name, await apksignerVerdict(f.file, f.verifyMinSdk === null ? {} : { minSdk: f.verifyMinSdk }));
  };
  await Promise.all([worker(), worker()]);
}, 600_000);

afterAll(() => {
  const checked = tally.accepted + tally.rejected;
  console.log(`APK signature differential: ${checked} fixtures (apksigner accepted ${tally.accepted}, rejected ${tally.rejected}; ${tally.refused} it refused to sign); `
    + `verifyApk agrees on ${tally.verifier}/${checked}, analyzePackage on ${tally.analysis}/${tally.analysed}`
    + (tally.disagreements.length ? `; disagreements: ${tally.disagreements.join(', ')}` : ''));
});

type Verdict = { verified: boolean; schemes?: string[]; signers?: string[] };

/** What both sides are compared on: the schemes and signers only of an APK that verifies (apksigner prints none otherwise). */
function shape(verified: boolean, schemes: string[], signers: string[]): Verdict {
  return verified ? { verified, schemes, signers } : { verified };
}

const sha256 = (der: Buffer) => createHash('sha256').update(der).digest('hex');

test.each(NAMES)('%s', async (name) => {
  const fixture = corpus.fixtures.find((f) => f.name === name);
  if (!fixture) {
    // Only a fixture apksigner itself would not sign (or a scheme it does not have) may be missing.
    expect(corpus.skipped.map((s) => s.name)).toContain(baseOf(name));
    tally.refused++;
    return;
  }
  const oracle = verdicts.get(name)!;
  if (oracle.verified) tally.accepted++;
  else tally.rejected++;
  const expected = shape(oracle.verified, oracle.schemes, oracle.signers.map((s) => s.sha256));
  const problems: string[] = [];

  const ours = await verifyFixture(fixture);
  const actual = shape(ours.verified, ours.schemes, ours.signers.map(sha256));
  if (JSON.stringify(actual) !== JSON.stringify(expected)) problems.push(`verifyApk ${JSON.stringify(actual)} (failures: ${describeFailures(ours)})`);
  else if (!ours.verified && ours.failures.length === 0) problems.push('verifyApk rejects without naming a failed check');
  else tally.verifier++;

  // The analysis reads minSdk from the manifest: it is compared with apksigner's verdict without --min-sdk-version.
  if (fixture.verifyMinSdk === null) {
    tally.analysed++;
    const analysis = await analyzePackage(fixture.file, 'android');
    const ids = analysis.findings.map((f) => f.id);
    const signing = analysis.signing && 'schemes' in analysis.signing ? analysis.signing : null;
    const got = signing ? shape(signing.verified, signing.schemes, signing.signers.map((s) => s.sha256)) : { verified: false };
    const before = problems.length;
    if (oracle.verified) {
      if (JSON.stringify(got) !== JSON.stringify(expected)) problems.push(`analyzePackage signing ${JSON.stringify(got)}`);
      const wrong = ids.filter((id) => SIGNATURE_FINDINGS.includes(id));
      if (wrong.length) problems.push(`analyzePackage found ${wrong.join(', ')} on an APK apksigner verifies`);
    } else {
      if (signing?.verified) problems.push('analyzePackage says signing.verified on an APK apksigner rejects');
      // A file apksig cannot read as a ZIP at all ("Malformed APK") is not a package either: package.unreadable,
      // which scores 0 like any rejection, is the analysis' name for that verdict.
      const unreadable = oracle.exception !== null && ids.includes('package.unreadable');
      if (!ids.includes('android.signature-invalid') && !unreadable) problems.push(`analyzePackage has no android.signature-invalid (findings: ${ids.join(', ') || 'none'})`);
    }
    if (problems.length === before) tally.analysis++;
  }

  if (problems.length) {
    tally.disagreements.push(name);
    throw new Error(`${name} (${fixture.description}):\n  apksigner ${describeVerdict(oracle)} -> ${JSON.stringify(expected)}\n  ${problems.join('\n  ')}`);
  }
});

/** verifyApk with what the manifest declares (or the fixture's --min-sdk-version); a file apksig cannot read as an APK is a rejection. */
async function verifyFixture(f: CorpusFixture): Promise<ApkVerification> {
  try {
    return await verifyApk(f.file, {
      minSdk: f.verifyMinSdk ?? f.manifest.minSdk ?? 1,
      targetSdk: f.manifest.targetSdk,
      targetSandboxVersion: f.manifest.targetSandboxVersion,
    });
  } catch (err) {
    if (!isMalformedApk(err)) throw err;
    return { verified: false, present: [], schemes: [], signers: [], lineage: [], failures: [{ scheme: 'v1', signer: null, check: `malformed: ${err.message}` }] };
  }
}

function describeFailures(v: ApkVerification): string {
  return v.failures.map((f) => `${f.scheme}${f.signer === null ? '' : ` signer #${f.signer}`}: ${f.check}`).join(' | ') || 'none';
}
