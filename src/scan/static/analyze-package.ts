import path from 'node:path';
import type { Finding, Platform } from '../types';
import { AAB_MANIFEST, APK_MANIFEST, analyzeAndroid, isAndroidEntry } from './android/analyze-android';
import { LimitExceededError, UnreadablePackageError } from './errors';
import { incompleteFinding } from './incomplete';
import { LIMITS } from './limits';
import { SEVERITIES } from '../types';
import { analyzeIos, hasIosInfoPlist, isIosEntry } from './ios/analyze-ios';
import { unexpectedFailureFinding, unreadableFinding, wrongPlatformFinding } from './unreadable';
import { PackageZip } from './zip-reader';

export type StaticAnalysis = { findings: Finding[]; target: { name: string; version: string | null } };

export type AnalyzeOptions = {
  /** Clock for certificate and profile expiry; injected so tests need no real time. */
  now?: Date;
};

/**
 * Static analysis of an APK, AAB or IPA on disk. Never rejects: a package that cannot be read yields
 * a `package.unreadable` (or `package.wrong-platform`) finding, one that reaches a cap of limits.ts a
 * `scan.incomplete` finding, so a scan job always completes. Findings are bounded in number and length.
 * This runs the parsers on the calling thread: the service calls it in a worker (see ../worker).
 */
export async function analyzePackage(filePath: string, platform: Platform, options: AnalyzeOptions = {}): Promise<StaticAnalysis> {
  const result = await analyzeUnbounded(filePath, platform, options);
  return { findings: boundFindings(result.findings), target: { name: clip(result.target.name, 256), version: result.target.version === null ? null : clip(result.target.version, 64) } };
}

async function analyzeUnbounded(filePath: string, platform: Platform, options: AnalyzeOptions): Promise<StaticAnalysis> {
  const now = options.now ?? new Date();
  const fallbackTarget = { name: path.basename(filePath), version: null };
  let zip: PackageZip | null = null;
  try {
    zip = await PackageZip.open(filePath, (name) => isAndroidEntry(name) || isIosEntry(name));
    if (platform === 'android' && !zip.has(APK_MANIFEST) && !zip.has(AAB_MANIFEST) && hasIosInfoPlist(zip)) {
      return { findings: [wrongPlatformFinding('android')], target: fallbackTarget };
    }
    if (platform === 'ios' && !hasIosInfoPlist(zip) && (zip.has(APK_MANIFEST) || zip.has(AAB_MANIFEST))) {
      return { findings: [wrongPlatformFinding('ios')], target: fallbackTarget };
    }
    return platform === 'android' ? await analyzeAndroid(zip, filePath, now) : await analyzeIos(zip, filePath, now);
  } catch (err) {
    if (err instanceof UnreadablePackageError) return { findings: [unreadableFinding(platform, err)], target: fallbackTarget };
    if (err instanceof LimitExceededError) return { findings: [incompleteFinding({ kind: 'limit', limit: err.limit, message: err.message })], target: fallbackTarget };
    // The stack of a crafted document that slipped past the depth caps is still a verdict, not a crash.
    if (err instanceof RangeError && /call stack/i.test(err.message)) {
      return { findings: [incompleteFinding({ kind: 'limit', limit: 'xmlDepth', message: 'the package nests deeper than the analyser\'s stack' })], target: fallbackTarget };
    }
    // Anything else (a parser bug, an I/O error) must still end the scan with a finding, not a stuck job.
    return { findings: [unexpectedFailureFinding(platform, err instanceof Error ? err.message : String(err))], target: fallbackTarget };
  } finally {
    zip?.close();
  }
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
  }));
}

/**
 * Characters package text must not bring into a finding: controls (a title is one line wherever it is shown: a CI log,
 * where a line break could start a workflow command, an annotation, an alert) and bidirectional overrides, which would
 * make a quoted domain read differently from what it is. A detail keeps its line breaks.
 */
const UNPRINTABLE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const oneLine = (text: string) => text.replace(UNPRINTABLE, ' ').replace(/\n/g, ' ');

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
