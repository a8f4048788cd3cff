// Google's `apksigner verify -v --print-certs` run on a file and read field for field: the reference verdict the
// signature differential tests compare with. Only what apksigner prints is reported; nothing is inferred.
import { execFile } from 'node:child_process';
import type { ApkScheme } from '../../src/scan/static/signing/apk-verification';

/** Schemes the verifier contract names, in apksigner's order; apksigner also prints v4 (and, later, v3.2). */
const CONTRACT_SCHEMES: readonly ApkScheme[] = ['v1', 'v2', 'v3', 'v3.1'];

export type ApksignerSigner = {
  /** What apksigner calls the signer ("Signer #1", or "V3.0 Signer:" / "V3.1 Signer (minSdkVersion=33, ...)" in later versions). */
  label: string;
  sha256: string;
  dn: string | null;
  keyAlgorithm: string | null;
  keyBits: number | null;
};

export type ApksignerVerdict = {
  /** Exit status 0 and "Verifies" printed. */
  verified: boolean;
  exitCode: number;
  /** Every "Verified using <scheme> scheme (...): true|false" line (printed only when the APK verifies). */
  schemeLines: Record<string, boolean>;
  /** The contract's schemes apksigner printed as true, in order. */
  schemes: ApkScheme[];
  /** Certificates as --print-certs prints them, in order. */
  signers: ApksignerSigner[];
  /** "ERROR: ..." lines without the prefix, e.g. "APK Signature Scheme v2 signer #1: APK integrity check failed ...". */
  errors: string[];
  warnings: string[];
  /** An uncaught exception's first line ("Exception in thread ..."), as for a file that is not a zip. */
  exception: string | null;
  /** The schemes ERROR lines name ("JAR signer" is v1). */
  errorSchemes: ApkScheme[];
  stdout: string;
  stderr: string;
};

export type VerdictOptions = { minSdk?: number; maxSdk?: number };

/** Runs `apksigner verify -v --print-certs [--min-sdk-version N] [--max-sdk-version N] <file>`. */
export async function apksignerVerdict(file: string, opts: VerdictOptions = {}): Promise<ApksignerVerdict> {
  const args = ['verify', '-v', '--print-certs'];
  if (opts.minSdk !== undefined) args.push('--min-sdk-version', String(opts.minSdk));
  if (opts.maxSdk !== undefined) args.push('--max-sdk-version', String(opts.maxSdk));
  args.push(file);
  const { code, stdout, stderr } = await runTool('apksigner', args);
  return parseApksignerOutput(code, stdout, stderr);
}

/** Parses apksigner's verify output (exported so the parsing itself can be checked on printed text). */
export function parseApksignerOutput(exitCode: number, stdout: string, stderr: string): ApksignerVerdict {
  const lines = `${stdout}\n${stderr}`.split('\n').map((l) => l.trimEnd()).filter((l) => l.length > 0);
  const schemeLines: Record<string, boolean> = {};
  const bySigner = new Map<string, ApksignerSigner>();
  const errors: string[] = [];
  const warnings: string[] = [];
  let exception: string | null = null;
  let verifies = false;
  const signer = (label: string) => {
    let s = bySigner.get(label);
    if (!s) bySigner.set(label, (s = { label, sha256: '', dn: null, keyAlgorithm: null, keyBits: null }));
    return s;
  };
  for (const line of lines) {
    let m: RegExpExecArray | null;
    if (line === 'Verifies') verifies = true;
    else if ((m = /^Verified using (v[\d.]+) scheme \(.*\): (true|false)$/.exec(line))) schemeLines[m[1]] = m[2] === 'true';
    else if ((m = /^ERROR: (.*)$/.exec(line))) errors.push(m[1]);
    else if ((m = /^WARNING: (.*)$/.exec(line))) warnings.push(m[1]);
    else if ((m = /^Exception in thread "[^"]*" (.*)$/.exec(line))) exception ??= m[1];
    // Public key digests share the "<label> ... SHA-256 digest" shape: only the certificate's is the signer's.
    else if ((m = /^(.*?) certificate SHA-256 digest: ([0-9a-f]{64})$/.exec(line))) signer(m[1]).sha256 = m[2];
    else if ((m = /^(.*?) certificate DN: (.*)$/.exec(line))) signer(m[1]).dn = m[2];
    else if ((m = /^(.*?) key algorithm: (.*)$/.exec(line))) signer(m[1]).keyAlgorithm = m[2];
    else if ((m = /^(.*?) key size \(bits\): (\d+)$/.exec(line))) signer(m[1]).keyBits = Number(m[2]);
  }
  const errorSchemes = CONTRACT_SCHEMES.filter((s) => errors.some((e) => schemeOfError(e) === s));
  return {
    verified: exitCode === 0 && verifies,
    exitCode,
    schemeLines,
    schemes: CONTRACT_SCHEMES.filter((s) => schemeLines[s] === true),
    signers: [...bySigner.values()].filter((s) => s.sha256 !== ''),
    errors,
    warnings,
    exception,
    errorSchemes,
    stdout,
    stderr,
  };
}

/** The scheme an ERROR line is about, or null for errors of the APK as a whole. */
function schemeOfError(error: string): ApkScheme | null {
  if (error.startsWith('JAR signer ')) return 'v1';
  const m = /^APK Signature Scheme (v[\d.]+) /.exec(error);
  return m && (CONTRACT_SCHEMES as readonly string[]).includes(m[1]) ? (m[1] as ApkScheme) : null;
}

/** One line for a test failure message: the verdict and what apksigner complained of. */
export function describeVerdict(v: ApksignerVerdict): string {
  if (v.verified) return `verifies (${v.schemes.join('+') || 'no scheme'}; signers ${v.signers.map((s) => s.sha256.slice(0, 12)).join(', ')})`;
  return `DOES NOT VERIFY: ${[...v.errors, ...(v.exception ? [v.exception] : [])].join(' | ') || `exit ${v.exitCode}`}`;
}

export type JarsignerVerdict = {
  /** Exit status 0 and "jar verified." printed. */
  verified: boolean;
  /** "jar is unsigned." printed: no signature at all. */
  unsigned: boolean;
  exitCode: number;
  /** jarsigner's error line ("jarsigner: java.lang.SecurityException: SHA-256 digest error for ..."), if any. */
  error: string | null;
  /** SHA-256 of each signer certificate, lowercase hex, as `keytool -printcert -jarfile` prints them (when verified). */
  signers: string[];
};

/**
 * The JDK's `jarsigner -verify` on a JAR-signed file (an App Bundle), with `keytool -printcert -jarfile` for the
 * certificates. Without -strict: a self-signed certificate is a warning, as it is for Android.
 */
export async function jarsignerVerdict(file: string): Promise<JarsignerVerdict> {
  const verify = await runTool('jarsigner', ['-verify', '-verbose', '-certs', file]);
  const text = `${verify.stdout}\n${verify.stderr}`;
  const verified = verify.code === 0 && /^jar verified\.$/m.test(text);
  let signers: string[] = [];
  if (verified) {
    const printed = await runTool('keytool', ['-printcert', '-jarfile', file]);
    signers = [...printed.stdout.matchAll(/^\s*SHA256: ([0-9A-F:]{95})$/gm)].map((m) => m[1].replace(/:/g, '').toLowerCase());
  }
  return {
    verified,
    unsigned: /^jar is unsigned\.$/m.test(text),
    exitCode: verify.code,
    error: /^jarsigner(?: error)?: (.*)$/m.exec(text)?.[1] ?? null,
    signers,
  };
}

/** Runs a tool to its end: a non-zero exit is a verdict, not an error; failing to start it at all is. */
function runTool(tool: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(tool, args, { maxBuffer: 1 << 24, timeout: 120_000 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') reject(err);
      else resolve({ code: err ? Number(err.code) : 0, stdout, stderr });
    });
  });
}
