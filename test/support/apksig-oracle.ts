// Google's apksig (the library behind apksigner), newer than Debian's apksigner, run through tools/apksig-oracle: it
// signs with APK Signature Scheme v3.1 and verifies it. tools/apksig-oracle/build.sh downloads and compiles it on
// first use (javac and Maven Central needed then). Only what apksig reports is returned; nothing is inferred.
import path from 'node:path';
import type { ApkScheme } from '../../src/scan/static/signing/apk-verification';
import { run } from './host-tools';

const BUILD = path.resolve(__dirname, '..', '..', 'tools', 'apksig-oracle', 'build.sh');

let classpath: Promise<string> | null = null;

/** The oracle's Java classpath, building it once per process. */
export function apksigOracleClasspath(): Promise<string> {
  classpath ??= run('bash', [BUILD], { maxBuffer: 1 << 20, timeout: 300_000 }).then(({ stdout }) => stdout.trim().split('\n').pop()!);
  return classpath;
}

export type ApksigSignOptions = {
  input: string;
  output: string;
  /** PKCS#12 keystore (password "android") of the signer, the old key when rotating. */
  key: string;
  /** Rotates to this key with a lineage old -> new: v3.1 by the new key from `rotationMinSdk` (default 33). */
  rotateTo?: string;
  rotationMinSdk?: number;
  v1?: boolean;
  v2?: boolean;
  v3?: boolean;
  verity?: boolean;
};

/** Signs with apksig's ApkSigner (minSdk read from the manifest, as apksigner does). */
export async function apksigSign(o: ApksigSignOptions): Promise<string[]> {
  const args = ['sign', '--in', o.input, '--out', o.output, '--key', o.key];
  if (o.rotateTo) args.push('--rotate-to', o.rotateTo);
  if (o.rotationMinSdk !== undefined) args.push('--rotation-min-sdk', String(o.rotationMinSdk));
  for (const flag of ['v1', 'v2', 'v3', 'verity'] as const) if (o[flag] !== undefined) args.push(`--${flag}`, String(o[flag]));
  await run('java', ['-cp', await apksigOracleClasspath(), 'ApksigOracle', ...args], { maxBuffer: 1 << 22, timeout: 120_000 });
  return args;
}

export type ApksigVerdict = {
  verified: boolean;
  /** The contract's schemes apksig reports as "verified using", in order. */
  schemes: ApkScheme[];
  /** SHA-256 of the certificates apksigner --print-certs prints (ApkVerifier's getSignerCertificates). */
  signers: string[];
  /** SHA-256 of each certificate of the signing lineage, oldest first. */
  lineage: string[];
  errors: string[];
  warnings: string[];
  /** apksig could not read the file at all (e.g. "Malformed APK"). */
  exception: string | null;
};

export type ApksigVerifyRequest = { file: string; minSdk?: number; maxSdk?: number };

/** Verifies each file with apksig's ApkVerifier, all in one JVM. */
export async function apksigVerify(requests: ApksigVerifyRequest[]): Promise<ApksigVerdict[]> {
  const args = ['verify'];
  for (const r of requests) {
    if (r.minSdk !== undefined) args.push('--min-sdk', String(r.minSdk));
    if (r.maxSdk !== undefined) args.push('--max-sdk', String(r.maxSdk));
    args.push(r.file);
  }
  const { stdout } = await run('java', ['-cp', await apksigOracleClasspath(), 'ApksigOracle', ...args], { maxBuffer: 1 << 24, timeout: 300_000 });
  const lines = stdout.split('\n').filter((l) => l.startsWith('{'));
  if (lines.length !== requests.length) throw new Error(`apksig oracle printed ${lines.length} verdicts for ${requests.length} files:\n${stdout}`);
  return lines.map(parseVerdict);
}

type RawVerdict = { verified: boolean; schemes?: Record<string, boolean>; signers?: string[]; lineage?: string[]; errors?: string[]; warnings?: string[]; exception?: string };

function parseVerdict(line: string): ApksigVerdict {
  const raw = JSON.parse(line) as RawVerdict;
  const schemes = (['v1', 'v2', 'v3', 'v3.1'] as const).filter((s) => raw.schemes?.[s] === true);
  return {
    verified: raw.verified,
    schemes,
    signers: raw.signers ?? [],
    lineage: raw.lineage ?? [],
    errors: raw.errors ?? [],
    warnings: raw.warnings ?? [],
    exception: raw.exception ?? null,
  };
}

/** One line for a failure message: the verdict and what apksig complained of. */
export function describeApksigVerdict(v: ApksigVerdict): string {
  if (v.verified) return `verifies (${v.schemes.join('+')}; signers ${v.signers.map((s) => s.slice(0, 12)).join(', ')}; lineage ${v.lineage.map((s) => s.slice(0, 12)).join(' -> ') || 'none'})`;
  return `DOES NOT VERIFY: ${[...v.errors, ...(v.exception ? [v.exception] : [])].join(' | ') || 'no error named'}`;
}
