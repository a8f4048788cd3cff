// Protects: the APK signature verdict is apksig's on packages changed after signing, region by region. 312 seeded
// mutants (test/fuzz/apk-mutants.ts: local headers, entry data, data descriptors, the APK Signing Block and its v2,
// v3 and v3.1 signer records, the central directory, the end record and bytes before it, entries added, JAR files
// under META-INF/ edited, the manifest's minSdkVersion) of the signing corpora, each verified by verifyApk with the
// options the analysis reads from the mutant's manifest and by apksig (tools/apksig-oracle) as `apksigner verify`
// runs: verified or not, and the schemes and signers of what verifies, must be equal. `npm run fuzz:apksig` runs
// thousands more under other seeds.
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { REGION_CLASSES } from '../../fuzz/apk-mutants';
import { agree, describeDisagreement, loadBases, runDifferential, summary } from '../../fuzz/apk-differential';

jest.setTimeout(300_000);

/** 24 mutants of each of the 13 region classes (classOf cycles through them). */
const MUTANTS = 24 * REGION_CLASSES.length;
const SEED = 20_240_601;

const work = mkdtempSync(path.join(os.tmpdir(), 'shieldgate-apk-mutants-'));
afterAll(() => rm(work, { recursive: true, force: true }));

test('seeded mutants of signed APKs get apksig\'s verdict, in every region', async () => {
  const outcomes = await runDifferential(await loadBases(), SEED, MUTANTS, work);
  const disagreements = outcomes.filter((o) => !agree(o.ours, o.apksig)).map(describeDisagreement);
  console.log(`APK mutation differential (seed ${SEED}):\n${summary(outcomes).join('\n')}`);
  for (const cls of REGION_CLASSES) expect({ cls, mutants: outcomes.filter((o) => o.cls === cls).length }).toEqual({ cls, mutants: 24 });
  // Both verdicts occur, so agreement is not agreement on one answer.
  expect(outcomes.filter((o) => o.apksig.verified).length).toBeGreaterThan(10);
  expect(outcomes.filter((o) => !o.apksig.verified).length).toBeGreaterThan(100);
  expect(disagreements).toEqual([]);
});
