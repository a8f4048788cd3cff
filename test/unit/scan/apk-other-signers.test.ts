// Protects: the APK signature verdict is apksig's on packages signed by other tools and eras than apksigner: the JDK's
// jarsigner (SHA-1 with RSA and DSA as before 2017, SHA-256 with DSA, its current defaults, ECDSA, SHA-512), the
// Android Gradle Plugin 1.5's SignedJarBuilder and the AGP 3.1's apksig 3.1.4, signed then zipaligned and aligned then
// signed (zipalign -p too), and copies broken after signing (test/fixtures/other-signers-corpus.ts). For every fixture
// apksig's verdict (tools/apksig-oracle) and `apksigner verify`'s are computed here, and verifyApk and the static
// analysis must reach apksig's: verified or not, the schemes, the signer certificates; a rejected APK is
// android.signature-invalid (android.unsigned when no signature is left at all), an accepted one carries no
// signature finding. apksigner must agree with apksig too.
import { createHash } from 'node:crypto';
import { analyzePackage } from '../../../src/scan/static/analyze-package';
import type { ApkVerification } from '../../../src/scan/static/signing/apk-verification';
import { isMalformedApk, verifyApk } from '../../../src/scan/static/signing/apk-verifier';
import { type OtherSignersCorpus, type OtherSignersFixture, otherSignerBaseOf, otherSignersCorpus, plannedOtherSignerNames } from '../../fixtures/other-signers-corpus';
import { type ApksigVerdict, apksigVerify, describeApksigVerdict } from '../../support/apksig-oracle';
import { type ApksignerVerdict, apksignerVerdict, describeVerdict } from '../../support/apksigner-verdict';

jest.setTimeout(120_000);

const NAMES = plannedOtherSignerNames();
const SIGNATURE_FINDINGS = ['android.signature-invalid', 'android.signature-corrupt', 'android.unsigned'];

let corpus: OtherSignersCorpus;
const apksig = new Map<string, ApksigVerdict>();
const apksigner = new Map<string, ApksignerVerdict>();
const tally = { verifier: 0, analysis: 0, analysed: 0, apksigner: 0, accepted: 0, rejected: 0, skipped: [] as string[], disagreements: [] as string[] };

beforeAll(async () => {
  corpus = await otherSignersCorpus();
  // The oracles' verdicts, asked every run (never cached with the corpus): apksig's in one JVM, apksigner's two at a time.
  const all = await apksigVerify(corpus.fixtures.map((f) => ({ file: f.file, minSdk: f.verifyMinSdk ?? undefined })));
  corpus.fixtures.forEach((f, i) => apksig.set(f.name, all[i]));
  const queue = [...corpus.fixtures];
  const worker = async () => {
    for (let f = queue.shift(); f; f = queue.shift()) apksigner.set(f.name, await apksignerVerdict(f.file, f.verifyMinSdk === null ? {} : { minSdk: f.verifyMinSdk }));
  };
  await Promise.all([worker(), worker()]);
}, 600_000);

afterAll(() => {
  const checked = tally.accepted + tally.rejected;
  console.log(`APK other-signers differential: ${checked} fixtures (apksig accepted ${tally.accepted}, rejected ${tally.rejected}; `
    + `${tally.skipped.length} no tool would make${tally.skipped.length ? `: ${[...new Set(tally.skipped)].join(', ')}` : ''}); `
    + `verifyApk agrees on ${tally.verifier}/${checked}, analyzePackage on ${tally.analysis}/${tally.analysed}, apksigner on ${tally.apksigner}/${checked}`
    + (tally.disagreements.length ? `; disagreements: ${tally.disagreements.join(', ')}` : ''));
});

type Verdict = { verified: boolean; schemes?: string[]; signers?: string[]; lineage?: string[] };

/** Schemes, signers and lineage are compared only for an APK that verifies (apksig names none otherwise). */
function shape(verified: boolean, schemes: string[], signers: string[], lineage: string[]): Verdict {
  return verified ? { verified, schemes, signers, lineage } : { verified };
}

const sha256 = (der: Buffer) => createHash('sha256').update(der).digest('hex');

test.each(NAMES)('%s', async (name) => {
  const fixture = corpus.fixtures.find((f) => f.name === name);
  if (!fixture) {
    // Only a fixture whose tool refused to make it may be missing, and the builder said why.
    const skip = corpus.skipped.find((s) => s.name === otherSignerBaseOf(name));
    expect(skip?.reason).toEqual(expect.stringContaining('refused'));
    tally.skipped.push(skip!.name);
    return;
  }
  const oracle = apksig.get(name)!;
  if (oracle.verified) tally.accepted++;
  else tally.rejected++;
  const expected = shape(oracle.verified, oracle.schemes, oracle.signers, oracle.lineage);
  const problems: string[] = [];

  const ours = await verifyFixture(fixture);
  const actual = shape(ours.verified, ours.schemes, ours.signers.map(sha256), ours.lineage.map(sha256));
  if (JSON.stringify(actual) !== JSON.stringify(expected)) problems.push(`verifyApk ${JSON.stringify(actual)} (failures: ${describeFailures(ours)})`);
  else if (!ours.verified && ours.failures.length === 0) problems.push('verifyApk rejects without naming a failed check');
  else tally.verifier++;

  // The older oracle, Debian's apksigner, over the same range (it prints no lineage).
  const second = apksigner.get(name)!;
  const secondShape = shape(second.verified, second.schemes, second.signers.map((s) => s.sha256), oracle.verified ? oracle.lineage : []);
  if (JSON.stringify(secondShape) !== JSON.stringify(expected)) problems.push(`apksigner ${describeVerdict(second)} -> ${JSON.stringify(secondShape)}`);
  else tally.apksigner++;

  // The analysis reads minSdk from the manifest: it is compared with apksig's verdict without --min-sdk-version.
  if (fixture.verifyMinSdk === null) {
    tally.analysed++;
    const analysis = await analyzePackage(fixture.file, 'android');
    const ids = analysis.findings.map((f) => f.id);
    const signing = analysis.signing && 'schemes' in analysis.signing ? analysis.signing : null;
    const got = signing ? shape(signing.verified, signing.schemes, signing.signers.map((s) => s.sha256), signing.lineage) : { verified: false };
    const before = problems.length;
    if (oracle.verified) {
      if (JSON.stringify(got) !== JSON.stringify(expected)) problems.push(`analyzePackage signing ${JSON.stringify(got)}`);
      const wrong = ids.filter((id) => SIGNATURE_FINDINGS.includes(id));
      if (wrong.length) problems.push(`analyzePackage found ${wrong.join(', ')} on an APK apksig verifies`);
    } else {
      if (signing?.verified) problems.push('analyzePackage says signing.verified on an APK apksig rejects');
      const unreadable = oracle.exception !== null && ids.includes('package.unreadable');
      // A package left with no signature of any scheme (zipalign drops the APK Signing Block) is android.unsigned,
      // the analysis' name for that rejection (docs/scan-evidence.md, "Android signatures, verified as apksigner
      // verifies them").
      const unsigned = ours.present.length === 0 && ids.includes('android.unsigned');
      if (!ids.includes('android.signature-invalid') && !unreadable && !unsigned) problems.push(`analyzePackage has no android.signature-invalid (findings: ${ids.join(', ') || 'none'})`);
    }
    if (problems.length === before) tally.analysis++;
  }

  if (problems.length) {
    tally.disagreements.push(name);
    throw new Error(`${name} (${fixture.description}; ${fixture.steps.join(' -> ')}):\n  apksig ${describeApksigVerdict(oracle)} -> ${JSON.stringify(expected)}\n  ${problems.join('\n  ')}`);
  }
});

/** verifyApk with what the manifest declares (or the fixture's --min-sdk-version); a file apksig cannot read as an APK is a rejection. */
async function verifyFixture(f: OtherSignersFixture): Promise<ApkVerification> {
  try {
    return await verifyApk(f.file, { minSdk: f.verifyMinSdk ?? f.manifest.minSdk ?? 1, targetSdk: f.manifest.targetSdk, targetSandboxVersion: f.manifest.targetSandboxVersion });
  } catch (err) {
    if (!isMalformedApk(err)) throw err;
    return { verified: false, present: [], schemes: [], signers: [], lineage: [], failures: [{ scheme: 'v1', signer: null, check: `malformed: ${err.message}` }] };
  }
}

function describeFailures(v: ApkVerification): string {
  return v.failures.map((f) => `${f.scheme}${f.signer === null ? '' : ` signer #${f.signer}`}: ${f.check}`).join(' | ') || 'none';
}
