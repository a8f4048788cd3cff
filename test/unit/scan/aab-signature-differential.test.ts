// Protects: an App Bundle's JAR signature is judged as the JDK's `jarsigner -verify` judges it (Play reads bundles
// signed by jarsigner): a bundle jarsigner verifies is verified with its signer named, one with an entry or the .SF
// changed after signing is android.signature-invalid, an unsigned one android.unsigned. Bundles are built by
// aapt2/jarsigner (build-packages.ts) and broken by the signing corpus's zip surgery; jarsigner's verdicts are computed here.
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { analyzePackage } from '../../../src/scan/static/analyze-package';
import type { ApkVerification } from '../../../src/scan/static/signing/apk-verification';
import { verifyApk } from '../../../src/scan/static/signing/apk-verifier';
import { buildAab, cleanupFixtures } from '../../fixtures/build-packages';
import { readEntry, rebuildZip } from '../../fixtures/signing-corpus';
import { type JarsignerVerdict, jarsignerVerdict } from '../../support/apksigner-verdict';
import { manifest } from './helpers';

jest.setTimeout(120_000);
afterAll(cleanupFixtures);

const MIN_SDK = 26; // helpers' manifest(): what the bundles declare
const SIGNATURE_FINDINGS = ['android.signature-invalid', 'android.signature-corrupt', 'android.unsigned'];

type Case = { name: string; make: () => Promise<string> };

/** A copy of a signed bundle with one entry's contents replaced (CRC-32 and sizes fixed, so the zip stays valid). */
async function tampered(entry: string, change: (data: Buffer) => Buffer): Promise<string> {
  const aab = await buildAab({ manifest: manifest() });
  const bytes = await readFile(aab);
  await writeFile(aab, rebuildZip(bytes, { replace: new Map([[entry, change(readEntry(bytes, entry))]]) }));
  return aab;
}

const CASES: Case[] = [
  { name: 'signed by jarsigner', make: () => buildAab({ manifest: manifest() }) },
  { name: 'unsigned', make: () => buildAab({ manifest: manifest(), sign: 'none' }) },
  // BundleConfig.pb is empty: one byte more changes its digest and nothing the analysis reads.
  { name: 'entry changed after signing', make: () => tampered('BundleConfig.pb', (d) => Buffer.concat([d, Buffer.from([0x08])])) },
  {
    name: '.SF manifest digest changed after signing',
    make: () => tampered('META-INF/KEY.SF', (d) => Buffer.from(d.toString('latin1').replace(/(-Digest-Manifest: )(.)/, (_, k: string, c: string) => k + (c === 'A' ? 'B' : 'A')), 'latin1')),
  },
];

const sha256 = (der: Buffer) => createHash('sha256').update(der).digest('hex');
const agreed: string[] = [];
afterAll(() => console.log(`AAB signature differential: verifyApk and analyzePackage agree with jarsigner on ${agreed.length}/${CASES.length} bundles`));

test.each(CASES)('$name', async ({ name, make }) => {
  const aab = await make();
  const oracle: JarsignerVerdict = await jarsignerVerdict(aab);
  const ours: ApkVerification = await verifyApk(aab, { minSdk: MIN_SDK, bundle: true });
  const analysis = await analyzePackage(aab, 'android');
  const ids = analysis.findings.map((f) => f.id);
  const signing = analysis.signing && 'schemes' in analysis.signing ? analysis.signing : null;
  const expected = oracle.verified ? { verified: true, schemes: ['v1'], signers: oracle.signers } : { verified: false };
  const shape = (verified: boolean, schemes: string[], signers: string[]) => (verified ? { verified, schemes, signers } : { verified });
  const context = `${name}: jarsigner ${oracle.verified ? 'verifies' : oracle.unsigned ? 'says unsigned' : `rejects (${oracle.error ?? `exit ${oracle.exitCode}`})`}`;

  expect({ context, verifyApk: shape(ours.verified, ours.schemes, ours.signers.map(sha256)) }).toEqual({ context, verifyApk: expected });
  expect({ context, analysis: signing ? shape(signing.verified, signing.schemes, signing.signers.map((s) => s.sha256)) : { verified: false } })
    .toEqual({ context, analysis: expected });
  if (oracle.verified) expect(ids.filter((id) => SIGNATURE_FINDINGS.includes(id))).toEqual([]);
  else if (oracle.unsigned) expect(ids).toContain('android.unsigned');
  else expect(ids).toContain('android.signature-invalid');
  agreed.push(name);
});
