import type { ApkScheme, ApkVerification, SignatureFailure, VerifyOptions } from './apk-verification';
import { MalformedApkError, openApkSections, type ApkSections } from './apk-sections';
import { parseSchemeBlock, type SchemeSigner } from './apk-scheme-block';
import { contentDigests, type ContentDigestAlgorithm } from './content-digest';
import { verifyJar } from './jar-signature';
import { APK_SIGNATURE_ALGORITHMS, type ApkDigestAlgorithm } from './signature-algorithms';
import { VERITY_CHUNKED_SHA256, verityDigest, verityLayoutProblem } from './verity-digest';
import { localRecord, readCentralDirectory } from './zip-entries';

export { MalformedApkError } from './apk-sections';

const BLOCK_V2 = 0x7109871a;
const BLOCK_V3 = 0xf05368c0;
const BLOCK_V31 = 0x1b93ad61;
const SDK = { N: 24, O: 26, P: 28, R: 30, T: 33 } as const;
/** apksigner's default maxSdkVersion: every platform version, present and future. */
const ANY_SDK = 0x7fffffff;

type SchemeOutcome = { scheme: ApkScheme; signers: SchemeSigner[] };

/**
 * Verifies an APK's signatures as apksig's ApkVerifier.verify does (apksigner verify), over [minSdk, maxSdk]: v3.1
 * then v3 (from Android 9), v2 when the range starts below Android 9 or nothing newer was found (from Android 7.0),
 * JAR signing when the range starts below Android 7.0 or no APK Signing Block signature was found; then the signers of
 * the schemes must agree (v1 and v2 the same certificates, v3's oldest lineage certificate theirs), and targetSdk 30+
 * needs v2 or newer. The first scheme that fails ends the verification, as apksig's does. Never throws for a package
 * it can read; a file that is not a ZIP apksig reads is a MalformedApkError.
 */
export async function verifyApk(filePath: string, options: VerifyOptions): Promise<ApkVerification> {
  const s = await openApkSections(filePath);
  try {
    return await verifySections(s, options);
  } finally {
    await s.fh.close();
  }
}

async function verifySections(s: ApkSections, o: VerifyOptions): Promise<ApkVerification> {
  const minSdk = o.minSdk;
  const maxSdk = o.maxSdk ?? ANY_SDK;
  const pairs = o.bundle ? new Map<number, Buffer>() : s.signingBlock?.pairs ?? new Map<number, Buffer>();
  const present: ApkScheme[] = [];
  const failures: SignatureFailure[] = [];
  const verified: SchemeOutcome[] = [];
  const digests = new DigestCache(s);
  const fail = (scheme: ApkScheme, signer: number | null, check: string) => failures.push({ scheme, signer, check });
  const done = (): ApkVerification => result(present, verified, failures);

  if (maxSdk >= SDK.N) {
    let v31RotationMinSdk = 0;
    const tryScheme = async (id: number, scheme: ApkScheme, from: number, rotationMinSdk?: number): Promise<boolean> => {
      const block = pairs.get(id);
      if (!block) return false;
      present.push(scheme);
      const outcome = await verifyScheme(block, scheme, Math.max(minSdk, from), maxSdk, digests, fail, rotationMinSdk, verified);
      if (outcome) verified.push(outcome);
      return true;
    };
    if (maxSdk >= SDK.T && (await tryScheme(BLOCK_V31, 'v3.1', SDK.T))) {
      if (failures.length) return done();
      v31RotationMinSdk = Math.min(...verified.find((x) => x.scheme === 'v3.1')!.signers.map((x) => x.minSdk));
    }
    if (maxSdk >= SDK.P) {
      const found = await tryScheme(BLOCK_V3, 'v3', SDK.P, v31RotationMinSdk || undefined);
      if (!found && present.includes('v3.1')) fail('v3', null, 'a v3.1 block was found without the v3 block it must come with');
      if (failures.length) return done();
    }
    if (minSdk < SDK.P || verified.length === 0) {
      await tryScheme(BLOCK_V2, 'v2', SDK.N);
      if (failures.length) return done();
    }
  }
  const foundSchemeIds = verified.map((v) => (v.scheme === 'v2' ? 2 : v.scheme === 'v3' ? 3 : 31));
  const records = await readCentralDirectory(s);
  // apksig reads the manifest's local record for its minSdk, and Android's zip library refuses an entry whose local
  // header disagrees with the central directory: a manifest read that way makes the archive malformed.
  const manifest = records.find((r) => r.name === 'AndroidManifest.xml');
  if (manifest) await localRecord(s, manifest);
  const hasJarFiles = records.some((r) => /^META-INF\/[^/]+\.(SF|RSA|DSA|EC)$/.test(r.name));
  if (hasJarFiles) present.unshift('v1');
  if (maxSdk >= SDK.O && (o.targetSandboxVersion ?? 1) > 1 && verified.length === 0) {
    fail('v2', null, `targetSandboxVersion ${o.targetSandboxVersion} requires APK Signature Scheme v2 or newer`);
    return done();
  }
  let v1Signers: Buffer[] = [];
  let unprotected: string[] = [];
  if (minSdk < SDK.N || verified.length === 0) {
    const jar = await verifyJar(s, records, {
      minSdk,
      maxSdk,
      knownSchemeIds: o.bundle ? [] : maxSdk >= SDK.P ? [2, 3] : maxSdk >= SDK.N ? [2] : [],
      foundSchemeIds,
    });
    for (const e of jar.errors.slice(0, 4)) fail('v1', null, e);
    if (failures.length) return done();
    v1Signers = jar.signers;
    unprotected = jar.warnings ?? [];
  }
  crossSchemeChecks(v1Signers, verified, fail);
  const newest = verified.some((v) => v.scheme !== 'v2') ? 3 : verified.length ? 2 : 1;
  if ((o.targetSdk ?? 0) >= SDK.R && maxSdk >= (o.targetSdk ?? 0) && newest < 2) {
    fail('v1', null, `targetSdkVersion ${o.targetSdk} requires APK Signature Scheme v2 or newer, and the APK has only a JAR signature`);
  }
  return { ...result(present, verified, failures, v1Signers), unprotectedEntries: unprotected };
}

/** Verifies one v2/v3/v3.1 block: its signers, then the content digests they vouch for, then (v3) the SDK coverage. */
async function verifyScheme(
  block: Buffer, scheme: ApkScheme, minSdk: number, maxSdk: number, digests: DigestCache,
  fail: (scheme: ApkScheme, signer: number | null, check: string) => void, rotationMinSdk: number | undefined, earlier: SchemeOutcome[],
): Promise<SchemeOutcome | null> {
  const v3 = scheme !== 'v2';
  const parsed = parseSchemeBlock(block, v3, { minSdk, maxSdk });
  for (const e of parsed.errors) fail(scheme, e.signer, e.check);
  if (parsed.errors.length) return null;
  for (const signer of parsed.signers) {
    if (scheme === 'v2') {
      const known: number[] = maxSdk >= SDK.P ? [2, 3] : [2];
      const found: number[] = earlier.map((x) => (x.scheme === "v3" ? 3 : x.scheme === "v3.1" ? 31 : 2));
      for (const id of signer.strippingSchemeIds) {
        if (known.includes(id) && !found.includes(id)) fail(scheme, signer.index, `names APK Signature Scheme v${id} as used too, but the APK has no such signature (stripped)`);
      }
    }
    if (scheme === 'v3' && signer.rotationMinSdk !== null && maxSdk >= SDK.T) {
      if (rotationMinSdk === undefined) fail(scheme, signer.index, `names rotation from API level ${signer.rotationMinSdk} in a v3.1 block, and there is none (stripped)`);
      else if (rotationMinSdk !== signer.rotationMinSdk) fail(scheme, signer.index, `names rotation from API level ${signer.rotationMinSdk}, the v3.1 block from ${rotationMinSdk}`);
    }
  }
  const wanted = new Set(parsed.signers.flatMap((x) => [...x.verifiedDigests]));
  // apksig's verifyIntegrity refuses to compute a verity digest over a package not laid out in 4 KiB pages.
  const layout = wanted.has(VERITY_CHUNKED_SHA256) ? verityLayoutProblem(digests.sections) : null;
  if (layout) {
    fail(scheme, null, layout);
    return null;
  }
  const actual = await digests.get(wanted);
  for (const signer of parsed.signers) {
    for (const d of signer.digests) {
      const alg = APK_SIGNATURE_ALGORITHMS.get(d.algorithmId);
      if (!alg || !wanted.has(alg.digest)) continue;
      if (!actual.get(alg.digest)!.equals(d.digest)) fail(scheme, signer.index, `${alg.digest} digest mismatch (the package was changed after signing)`);
    }
  }
  // v3.1 may start at any platform version (the v3.0 block covers the rest), so only maxSdk must be covered (apksig
  // sets a v3.1 verifier's minSdk to its maxSdk); v3.0 alongside v3.1 only up to the rotation.
  const from = scheme === 'v3.1' ? maxSdk : minSdk;
  if (v3 && !failures(parsed)) coverage(parsed.signers, scheme, from, scheme === 'v3' && rotationMinSdk ? rotationMinSdk - 1 : maxSdk, fail);
  return { scheme, signers: parsed.signers };
}

function failures(p: { errors: unknown[] }): boolean {
  return p.errors.length > 0;
}

/** v3 signers must cover [minSdk, maxSdk] without overlap or gap, sorted by their maximum (apksig's check). */
function coverage(signers: SchemeSigner[], scheme: ApkScheme, minSdk: number, maxSdk: number, fail: (scheme: ApkScheme, signer: number | null, check: string) => void): void {
  const sorted = [...signers].sort((a, b) => a.maxSdk - b.maxSdk);
  let firstMin = 0;
  let lastMax = 0;
  let lastLineage = 0;
  for (const signer of sorted) {
    if (firstMin === 0) firstMin = signer.minSdk;
    else if (signer.minSdk !== lastMax + 1) return fail(scheme, signer.index, 'signers\' SDK ranges overlap or leave a gap');
    lastMax = signer.maxSdk;
    if (signer.lineage) {
      if (signer.lineage.length < lastLineage) return fail(scheme, signer.index, 'signers\' rotation histories are inconsistent');
      lastLineage = signer.lineage.length;
    }
  }
  if (firstMin > minSdk || lastMax < maxSdk) fail(scheme, null, `signers cover API levels ${firstMin}-${lastMax}, not ${minSdk}-${maxSdk >= ANY_SDK ? 'any' : maxSdk}`);
}

/** v1 and v2 must name the same signers; v3 must be theirs or rotate from theirs (apksig's last checks). */
function crossSchemeChecks(v1: Buffer[], verified: SchemeOutcome[], fail: (scheme: ApkScheme, signer: number | null, check: string) => void): void {
  const v2 = verified.find((x) => x.scheme === 'v2')?.signers.map((x) => x.certs[0]) ?? [];
  const v3 = verified.find((x) => x.scheme === 'v3');
  if (v1.length && v2.length) {
    if (v1.some((c) => !v2.some((d) => d.equals(c)))) fail('v1', null, 'a JAR signer has no v2 signature (v1 and v2 signers differ)');
    else if (v2.some((c) => !v1.some((d) => d.equals(c)))) fail('v2', null, 'a v2 signer has no JAR signature (v1 and v2 signers differ)');
  }
  if (!v3 || (!v1.length && !v2.length)) return;
  const older = v1.length ? v1 : v2;
  if (older.length !== 1) return fail('v3', null, 'v3 supports a single earlier signer, and the APK has several');
  const lineage = v3.signers.map((x) => x.lineage).filter((x): x is Buffer[] => !!x).sort((a, b) => b.length - a.length)[0];
  if (!lineage) {
    if (v3.signers.length !== 1) return fail('v3', null, 'several v3 signers without a rotation history');
    if (!older[0].equals(v3.signers[0].certs[0])) fail('v3', 1, `the v3 signer differs from the ${v1.length ? 'v1' : 'v2'} signer and no rotation history links them`);
  } else if (!lineage[0].equals(older[0])) {
    fail('v3', null, `the ${v1.length ? 'v1' : 'v2'} signer is not the oldest certificate of the v3 rotation history`);
  }
}

function result(present: ApkScheme[], verified: SchemeOutcome[], failures: SignatureFailure[], v1Signers: Buffer[] = []): ApkVerification {
  const ok = failures.length === 0;
  const schemes: ApkScheme[] = [];
  if (ok && v1Signers.length) schemes.push('v1');
  for (const scheme of ['v2', 'v3', 'v3.1'] as const) if (ok && verified.some((v) => v.scheme === scheme)) schemes.push(scheme);
  const v31 = verified.find((v) => v.scheme === 'v3.1');
  const v3 = verified.find((v) => v.scheme === 'v3');
  const v2 = verified.find((v) => v.scheme === 'v2');
  const effective = v31 ?? v3;
  const signers = !ok ? [] : effective ? [effective.signers[effective.signers.length - 1].certs[0]] : v2 ? v2.signers.map((x) => x.certs[0]) : v1Signers;
  const lineageSource = effective?.signers.map((x) => x.lineage).filter((x): x is Buffer[] => !!x).sort((a, b) => b.length - a.length)[0];
  return { verified: ok, present: [...new Set(present)], schemes, signers, lineage: ok ? lineageSource ?? [] : [], failures };
}

/**
 * Content digests computed at most once per package, whatever the number of schemes that need them. The verity
 * digest (only for packages signed with --verity-enabled) reads the package once more.
 */
class DigestCache {
  private readonly done = new Map<ApkDigestAlgorithm, Buffer>();
  constructor(readonly sections: ApkSections) {}

  async get(wanted: Set<ApkDigestAlgorithm>): Promise<Map<ApkDigestAlgorithm, Buffer>> {
    const missing = [...wanted].filter((a) => !this.done.has(a));
    const chunked = new Set(missing.filter((a): a is ContentDigestAlgorithm => a !== VERITY_CHUNKED_SHA256));
    if (chunked.size) for (const [a, d] of await contentDigests(this.sections, chunked)) this.done.set(a, d);
    if (missing.includes(VERITY_CHUNKED_SHA256)) this.done.set(VERITY_CHUNKED_SHA256, await verityDigest(this.sections));
    return this.done;
  }
}

export function isMalformedApk(err: unknown): err is MalformedApkError {
  return err instanceof MalformedApkError;
}
