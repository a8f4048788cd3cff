// Protects: the verdict on APK Signature Scheme v3.1 (platform-targeted key rotation) and on verity signatures is
// apksig's. Debian's apksigner predates v3.1, so these fixtures are signed and judged by Google's newer apksig
// (tools/apksig-oracle): a rotation from API 33 (old key in v1/v2/v3.0, new key in v3.1) on minSdk 14, 24 and 33
// apps and one targeted at API 35, verity digests on v2/v3/v3.1, some verified over narrower platform ranges, and
// copies broken after signing (the v3.1 block stripped, which the v3.0
// block's rotation-min-sdk attribute must catch; the v3.0 block stripped; a v3.1 signature or digest flipped; a
// verity digest or signature flipped; an entry changed). verifyApk must reach apksig's verdict: verified or not, the
// schemes apksig reports as verified, the signer --print-certs names and the lineage, oldest first.
import { createHash } from 'node:crypto';
import type { ApkVerification } from '../../../src/scan/static/signing/apk-verification';
import { isMalformedApk, verifyApk } from '../../../src/scan/static/signing/apk-verifier';
import { type ApksigCorpus, type ApksigFixture, apksigCorpus, plannedApksigFixtureNames } from '../../fixtures/apksig-v31-corpus';
import { type ApksigVerdict, apksigVerify, describeApksigVerdict } from '../../support/apksig-oracle';

jest.setTimeout(120_000);

const NAMES = plannedApksigFixtureNames();

let corpus: ApksigCorpus;
const verdicts = new Map<string, ApksigVerdict>();
const tally = { agreed: 0, accepted: 0, rejected: 0, disagreements: [] as string[] };

beforeAll(async () => {
  corpus = await apksigCorpus();
  // apksig's verdicts, all in one JVM, asked every run (never cached with the corpus).
  const all = await apksigVerify(corpus.fixtures.map((f) => ({ file: f.file, minSdk: f.verifyMinSdk ?? undefined, maxSdk: f.verifyMaxSdk ?? undefined })));
  corpus.fixtures.forEach((f, i) => verdicts.set(f.name, all[i]));
}, 600_000);

afterAll(() => {
  const checked = tally.accepted + tally.rejected;
  console.log(`APK signature v3.1 differential: ${checked} fixtures (apksig accepted ${tally.accepted}, rejected ${tally.rejected}); `
    + `verifyApk agrees on ${tally.agreed}/${checked}`
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
  expect(fixture).toBeDefined(); // every planned fixture is built: apksig signs all of them
  const oracle = verdicts.get(name)!;
  if (oracle.verified) tally.accepted++;
  else tally.rejected++;
  const expected = shape(oracle.verified, oracle.schemes, oracle.signers, oracle.lineage);
  const ours = await verifyFixture(fixture!);
  const actual = shape(ours.verified, ours.schemes, ours.signers.map(sha256), ours.lineage.map(sha256));
  let problem: string | null = null;
  if (JSON.stringify(actual) !== JSON.stringify(expected)) problem = `verifyApk ${JSON.stringify(actual)} (failures: ${describeFailures(ours)})`;
  else if (!ours.verified && ours.failures.length === 0) problem = 'verifyApk rejects without naming a failed check';
  if (problem) {
    tally.disagreements.push(name);
    throw new Error(`${name} (${fixture!.description}):\n  apksig ${describeApksigVerdict(oracle)} -> ${JSON.stringify(expected)}\n  ${problem}`);
  }
  tally.agreed++;
});

/** verifyApk over the range apksig was asked for (the manifest's minSdk to any, unless the fixture names one). */
async function verifyFixture(f: ApksigFixture): Promise<ApkVerification> {
  try {
    return await verifyApk(f.file, { minSdk: f.verifyMinSdk ?? f.manifest.minSdk, maxSdk: f.verifyMaxSdk ?? undefined, targetSdk: f.manifest.targetSdk });
  } catch (err) {
    if (!isMalformedApk(err)) throw err;
    return { verified: false, present: [], schemes: [], signers: [], lineage: [], failures: [{ scheme: 'v1', signer: null, check: `malformed: ${err.message}` }] };
  }
}

function describeFailures(v: ApkVerification): string {
  return v.failures.map((f) => `${f.scheme}${f.signer === null ? '' : ` signer #${f.signer}`}: ${f.check}`).join(' | ') || 'none';
}
