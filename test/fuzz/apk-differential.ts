// `npm run fuzz:apksig [-- --mutants 5000] [--seed 7] [--keep]`: the APK signature verifier against Google's apksig
// on seeded mutants of the signing corpora (apk-mutants.ts). Each mutant is verified by verifyApk in this process,
// with the options the analysis reads from the mutant's own manifest, and by apksig (tools/apksig-oracle) as
// `apksigner verify` runs, reading the manifest itself; one JVM per batch, one batch at a time. Verdicts must be
// equal: verified or not, and for a verified package the schemes and the signers. Prints a summary per region class
// and one line per disagreement, and exits 1 on any.
import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildManifestModel } from '../../src/scan/static/android/manifest-model';
import { parseBinaryXml } from '../../src/scan/static/android/binary-xml';
import { PackageZip } from '../../src/scan/static/package/zip-reader';
import { verifyApk } from '../../src/scan/static/signing/apk-verifier';
import { codenameApiLevel } from '../../src/scan/static/signing/codename-sdk';
import { apksigCorpus } from '../fixtures/apksig-v31-corpus';
import { signingCorpus } from '../fixtures/signing-corpus';
import { type ApksigVerdict, apksigVerify } from '../support/apksig-oracle';
import { REGION_CLASSES, type RegionClass, classOf, makeMutant, regionClasses } from './apk-mutants';

/** Mutants per JVM: enough that start-up is a small share, few enough that one batch is a few seconds. */
const BATCH = 200;
/** verifyApk on a corpus-sized package takes milliseconds; longer is a hang worth reporting. */
const OURS_TIMEOUT_MS = 20_000;

export type Base = { name: string; bytes: Buffer; classes: RegionClass[] };

/** The intact packages of both corpora: every key type and scheme (apksigner), and v3.1 rotation and verity (apksig). */
export async function loadBases(): Promise<Base[]> {
  const [jar, v31] = await Promise.all([signingCorpus(), apksigCorpus()]);
  const files = [
    ...jar.fixtures.filter((f) => f.base === null && f.verifyMinSdk === null),
    ...v31.fixtures.filter((f) => f.base === null && f.verifyMinSdk === null && f.verifyMaxSdk === null),
  ];
  const bases: Base[] = [];
  for (const f of files) {
    const bytes = await readFile(f.file);
    bases.push({ name: f.name, bytes, classes: regionClasses(bytes) });
  }
  return bases.sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * The base mutant `index` starts from: one that offers classOf(index), taking each such base in turn. Every other
 * round takes only bases without an APK Signing Block where the class has some: v2 and v3 digest every byte outside
 * the block, so nearly any change to their packages is refused by both sides, and the verdicts worth comparing (what
 * still verifies after a change) come mostly from JAR-signed packages.
 */
export function baseFor(bases: Base[], index: number): Base {
  const round = Math.floor(index / REGION_CLASSES.length);
  const offering = bases.filter((b) => b.classes.includes(classOf(index)));
  const jarOnly = offering.filter((b) => !b.classes.includes('signing-block'));
  const from = round % 2 === 1 && jarOnly.length ? jarOnly : offering.length ? offering : bases;
  return from[Math.floor(round / 2) % from.length];
}

type Verdict = { verified: boolean; schemes?: string[]; signers?: string[]; why: string };

/**
 * Our verdict as the analysis reaches it: minSdk (a preview codename at apksig's level for it, codename-sdk.ts),
 * targetSdk and targetSandboxVersion from the manifest as the package reader reads it; a package whose manifest it
 * cannot read, or that verifyApk throws on (MalformedApkError: "Malformed APK"), verifies nothing.
 */
export async function ourVerdict(file: string): Promise<Verdict> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no verdict within ${OURS_TIMEOUT_MS} ms`)), OURS_TIMEOUT_MS);
  });
  try {
    const verdict = async (): Promise<Verdict> => {
      const m = await manifestOf(file);
      const minSdk = m.minSdkCodename === null ? m.minSdk : codenameApiLevel(m.minSdkCodename) ?? m.minSdk;
      const v = await verifyApk(file, { minSdk, targetSdk: m.targetSdk, targetSandboxVersion: m.targetSandboxVersion });
      const why = v.failures.map((f) => `${f.scheme}${f.signer === null ? '' : ` #${f.signer}`}: ${f.check}`)[0] ?? 'verified';
      return shape(v.verified, v.schemes, v.signers.map((c) => createHash('sha256').update(c).digest('hex')), why);
    };
    return await Promise.race([verdict(), timeout]);
  } catch (err) {
    return { verified: false, why: `threw ${(err as Error).name}: ${(err as Error).message}` };
  } finally {
    clearTimeout(timer);
  }
}

async function manifestOf(file: string) {
  const zip = await PackageZip.open(file, (n) => n === 'AndroidManifest.xml');
  try {
    return buildManifestModel(parseBinaryXml(await zip.read('AndroidManifest.xml', 'manifest')));
  } finally {
    zip.close();
  }
}

export function apksigShape(v: ApksigVerdict): Verdict {
  return shape(v.verified, v.schemes, v.signers, v.verified ? 'verified' : v.errors[0] ?? v.exception ?? 'no error named');
}

/** Schemes and signers are compared only for a package that verifies: apksigner prints none otherwise. */
function shape(verified: boolean, schemes: string[], signers: string[], why: string): Verdict {
  return verified ? { verified, schemes, signers, why } : { verified, why };
}

/**
 * Verdicts that may differ by a documented decision. The package reader finds the central directory as Android's
 * libziparchive does, looking for a Zip64 end record whenever a field of the end record is saturated, the comment
 * length 0xFFFF included (docs/scan-evidence.md, "Android signatures, verified as apksigner verifies them"): the device cannot open such a package, apksig (which
 * ignores the comment length) verifies it, and the analysis calls it unreadable.
 */
function excused(ours: Verdict): boolean {
  return !ours.verified && ours.why.startsWith('threw UnreadablePackageError') && ours.why.includes('a saturated end record');
}

export function agree(ours: Verdict, apksig: Verdict): boolean {
  if (excused(ours)) return true;
  return ours.verified === apksig.verified && JSON.stringify(ours.schemes) === JSON.stringify(apksig.schemes) && JSON.stringify(ours.signers) === JSON.stringify(apksig.signers);
}

export type Outcome = { base: string; seed: number; index: number; cls: RegionClass; region: string; kind: string; ours: Verdict; apksig: Verdict };

/** Makes, writes (into `dir`, named seed-index.apk) and verifies mutants 0..count-1 of `seed`, one apksig JVM per batch. */
export async function runDifferential(bases: Base[], seed: number, count: number, dir: string, onBatch?: (done: number) => void): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (let from = 0; from < count; from += BATCH) {
    const batch = [];
    for (let index = from; index < Math.min(count, from + BATCH); index++) {
      const base = baseFor(bases, index);
      const m = makeMutant(base.name, base.bytes, seed, index);
      const file = path.join(dir, `${seed}-${index}.apk`);
      await writeFile(file, m.bytes);
      batch.push({ m, file });
    }
    // The JVM works on the batch while this process verifies it: the two cores each have one.
    const theirs = apksigVerify(batch.map((b) => ({ file: b.file })));
    const ours: Verdict[] = [];
    for (const b of batch) ours.push(await ourVerdict(b.file));
    const verdicts = await theirs;
    for (const [i, { m }] of batch.entries()) {
      outcomes.push({ base: m.base, seed, index: m.index, cls: m.cls, region: m.region, kind: m.kind, ours: ours[i], apksig: apksigShape(verdicts[i]) });
    }
    onBatch?.(outcomes.length);
  }
  return outcomes;
}

/** One line per disagreement: enough to make the mutant again (base, seed, index) and to see what differs. */
export function describeDisagreement(o: Outcome): string {
  const side = (v: Verdict) => (v.verified ? `verified ${v.schemes!.join('+')} signers ${v.signers!.map((s) => s.slice(0, 12)).join(',')}` : `rejected (${v.why.slice(0, 160)})`);
  return `${o.base} seed ${o.seed} index ${o.index} ${o.region} ${o.kind}: ours ${side(o.ours)} vs apksig ${side(o.apksig)}`;
}

/** Agreed / disagreed per region class, and how many mutants each side verified (so agreement is not on one answer). */
export function summary(outcomes: Outcome[]): string[] {
  return REGION_CLASSES.map((cls) => {
    const of = outcomes.filter((o) => o.cls === cls);
    const bad = of.filter((o) => !agree(o.ours, o.apksig)).length;
    const accepted = of.filter((o) => o.apksig.verified).length;
    return `${cls.padEnd(18)} ${String(of.length).padStart(6)} mutants  agreed ${String(of.length - bad).padStart(6)}  disagreed ${String(bad).padStart(4)}  (apksig verified ${accepted})`;
  });
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/** Runs `count` mutants of `seed`, prints the summary and each disagreement; resolves with how many there were. */
export async function apkDifferential(count: number, seed: number, keep = false): Promise<number> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'shieldgate-apk-mutants-'));
  const started = Date.now();
  const bases = await loadBases();
  console.log(`apk differential: ${count} mutants of ${bases.length} signed APKs, seed ${seed}, against apksig in batches of ${BATCH}`);
  try {
    const outcomes = await runDifferential(bases, seed, count, dir, (done) => process.stdout.write(`  ${done}/${count}\r`));
    const disagreements = outcomes.filter((o) => !agree(o.ours, o.apksig));
    for (const line of summary(outcomes)) console.log(line);
    for (const o of disagreements) console.log(`DISAGREE ${describeDisagreement(o)}`);
    console.log(`${outcomes.length} mutants in ${Math.round((Date.now() - started) / 1000)} s: ${outcomes.length - disagreements.length} agreed, ${disagreements.length} disagreed`
      + ` (apksig verified ${outcomes.filter((o) => o.apksig.verified).length})${keep ? `; mutants kept in ${dir}` : ''}`);
    return disagreements.length;
  } finally {
    if (!keep) await rm(dir, { recursive: true, force: true });
  }
}

/** The default run: about two minutes on two cores. */
export const DEFAULT_MUTANTS = 5000;

if (require.main === module) {
  apkDifferential(Number(arg('mutants') ?? DEFAULT_MUTANTS), Number(arg('seed') ?? 1), process.argv.includes('--keep'))
    .then((n) => {
      process.exitCode = n ? 1 : 0;
    })
    .catch((err) => {
      console.error(err);
      process.exit(1);
    });
}
