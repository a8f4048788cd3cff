import path from 'node:path';
import type { Finding, NativeLibrary, Platform, ScanInventory, ScanSigning } from '../model/types';
import { recogniseSdks } from './catalog/sdk-catalog';
import { AAB_MANIFEST, APK_MANIFEST, analyzeAndroid, isAndroidEntry } from './android/analyze-android';
import { LimitExceededError, UnreadablePackageError } from './package/errors';
import { incompleteFinding } from './package/incomplete';
import { LIMITS } from './package/limits';
import { SEVERITIES } from '../model/types';
import { analyzeIos, hasIosInfoPlist, isIosEntry, type IosAnalysis } from './ios/analyze-ios';
import type { TrustAnchors } from './ios/apple-chain';
import { unexpectedFailureFinding, unreadableFinding, wrongPlatformFinding } from './package/unreadable';
import { PackageZip } from './package/zip-reader';
import { redactDeep } from './secrets/redact';

/**
 * What a static analysis says of a package: its findings, the name and version it gives itself (and an Android
 * package's long version code, version-code.ts; null for iOS and for a package not read), who signed it and what it
 * holds (both null when the package could not be analysed far enough to know).
 */
export type StaticAnalysis = {
  findings: Finding[];
  target: { name: string; version: string | null; versionCode: number | null };
  signing: ScanSigning | null;
  inventory: ScanInventory | null;
};

export type AnalyzeOptions = {
  /** Clock for certificate and profile expiry; injected so tests need no real time. */
  now?: Date;
  /**
   * The CAs an iOS signer must chain to, in place of Apple's (src/scan/static/ios/apple-roots.ts): only for tests,
   * whose bundles are signed by a test CA since nobody outside Apple can mint an Apple-issued certificate. The
   * service never sets it.
   */
  iosTrustAnchors?: TrustAnchors;
  /**
   * Called once, as soon as the package has named itself (its manifest or Info.plist read), with the target the
   * analysis will return (redacted and bounded alike): a scan job that waits for earlier builds of the same package
   * needs the name long before a large package's analysis ends. Not called for a package that names nothing.
   */
  onTarget?: (target: StaticAnalysis['target']) => void;
};

/**
 * Static analysis of an APK, AAB or IPA on disk. Never rejects: a package that cannot be read yields
 * a `package.unreadable` (or `package.wrong-platform`) finding, one that reaches a cap of limits.ts a
 * `scan.incomplete` finding, so a scan job always completes. Findings are bounded in number and length.
 * This runs the parsers on the calling thread: the service calls it in a worker (see ../worker).
 */
export async function analyzePackage(filePath: string, platform: Platform, options: AnalyzeOptions = {}): Promise<StaticAnalysis> {
  const onTarget = options.onTarget && ((target: StaticAnalysis['target']) => options.onTarget!(boundTarget(redactDeep(target))));
  const result = await analyzeUnbounded(filePath, platform, { ...options, onTarget });
  // Redacted before the clip: a token cut at the end of a detail would no longer match its pattern, and what is left
  // of it would show. redactDeep first cuts every text to REDACTED_TEXT_MAX, far above what the clip keeps.
  const redacted = redactDeep(result);
  return { findings: boundFindings(redacted.findings), target: boundTarget(redacted.target), signing: redacted.signing, inventory: redacted.inventory };
}

async function analyzeUnbounded(filePath: string, platform: Platform, options: AnalyzeOptions): Promise<StaticAnalysis> {
  const now = options.now ?? new Date();
  const failed = (finding: Finding): StaticAnalysis => ({ findings: [finding], target: { name: path.basename(filePath), version: null, versionCode: null }, signing: null, inventory: null });
  let zip: PackageZip | null = null;
  try {
    zip = await PackageZip.open(filePath, (name) => isAndroidEntry(name) || isIosEntry(name));
    if (platform === 'android' && !zip.has(APK_MANIFEST) && !zip.has(AAB_MANIFEST) && hasIosInfoPlist(zip)) {
      return failed(wrongPlatformFinding('android'));
    }
    if (platform === 'ios' && !hasIosInfoPlist(zip) && (zip.has(APK_MANIFEST) || zip.has(AAB_MANIFEST))) {
      return failed(wrongPlatformFinding('ios'));
    }
    if (platform === 'android') return await analyzeAndroid(zip, filePath, now, options.onTarget);
    // An iOS bundle has no version code: CFBundleVersion is text, and no attestation reports one.
    const onTarget = options.onTarget && ((target: IosAnalysis['target']) => options.onTarget!({ ...target, versionCode: null }));
    const ios = await analyzeIos(zip, filePath, now, options.iosTrustAnchors, onTarget);
    return { ...ios, target: { ...ios.target, versionCode: null }, inventory: iosInventory(ios.inventory) };
  } catch (err) {
    if (err instanceof UnreadablePackageError) return failed(unreadableFinding(platform, err));
    if (err instanceof LimitExceededError) return failed(incompleteFinding({ kind: 'limit', limit: err.limit, message: err.message }));
    // The stack of a crafted document that slipped past the depth caps is still a verdict, not a crash.
    if (err instanceof RangeError && /call stack/i.test(err.message)) {
      return failed(incompleteFinding({ kind: 'limit', limit: 'xmlDepth', message: 'the package nests deeper than the analyser\'s stack' }));
    }
    // Anything else (a parser bug, an I/O error) must still end the scan with a finding, not a stuck job.
    return failed(unexpectedFailureFinding(platform, err instanceof Error ? err.message : String(err)));
  } finally {
    zip?.close();
  }
}

/** An iOS bundle's inventory: its Mach-O files, and the SDKs its frameworks name (iOS has no permission list). */
function iosInventory(found: { nativeLibraries: NativeLibrary[]; frameworks: string[] }): ScanInventory {
  return { nativeLibraries: found.nativeLibraries, permissions: [], sdks: recogniseSdks({ frameworks: found.frameworks }) };
}

/**
 * At most LIMITS.findings findings, most severe first when some must go (ties keep their order), each quoting at
 * most LIMITS.findingTitle / LIMITS.findingDetail characters of what the package holds.
 */
function boundFindings(findings: Finding[]): Finding[] {
  const kept = findings.length <= LIMITS.findings
    ? findings
    : findings.map((f, i) => ({ f, i }))
      .sort((a, b) => SEVERITIES.indexOf(b.f.severity) - SEVERITIES.indexOf(a.f.severity) || a.i - b.i)
      .slice(0, LIMITS.findings)
      .sort((a, b) => a.i - b.i)
      .map(({ f }) => f);
  return kept.map((f) => ({
    ...f,
    title: clip(oneLine(f.title), LIMITS.findingTitle),
    detail: clip(f.detail.replace(UNPRINTABLE, ' '), LIMITS.findingDetail),
    fix: clip(oneLine(f.fix), LIMITS.findingDetail),
    // Package text (a component name, a domain) like a title: one line, clipped alike.
    ...(f.location === undefined ? {} : { location: clip(oneLine(f.location), LIMITS.findingTitle) }),
  }));
}

/**
 * The name and version the package gives itself (manifest package and versionName, CFBundleIdentifier, the
 * Payload/<name>.app folder) are package text like a quoted domain: shown as one line in the same places, and
 * cleaned the same way.
 */
function boundTarget(target: StaticAnalysis['target']): StaticAnalysis['target'] {
  return { name: clip(oneLine(target.name), 256), version: target.version === null ? null : clip(oneLine(target.version), 64), versionCode: target.versionCode };
}

/**
 * Characters package text must not bring into a finding or a scan target: controls (a title is one line wherever it
 * is shown: a CI log, where a line break could start a workflow command, an annotation, an alert), bidirectional
 * overrides, isolates and marks (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C), which would make a quoted
 * domain read differently from what it is, zero-width characters and the byte-order mark (U+200B-U+200D, U+FEFF),
 * which make two names that look the same differ, and lone surrogates, which are no character at all (with the u
 * flag, the range D800-DFFF matches only those: a pair is one code point). A detail keeps its line breaks.
 */
const UNPRINTABLE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff]/gu;
const oneLine = (text: string) => text.replace(UNPRINTABLE, ' ').replace(/\n/g, ' ');

/**
 * At most `max` UTF-16 units, the last an ellipsis when the text is cut. The cut falls between code points: a
 * high surrogate left before it would be half a character (the text is cleaned first, so it has no lone ones).
 */
function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = isHighSurrogate(text.charCodeAt(max - 2)) ? max - 2 : max - 1;
  return `${text.slice(0, end)}…`;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
