import path from 'node:path';
import type { Finding, Platform } from '../types';
import { AAB_MANIFEST, APK_MANIFEST, analyzeAndroid, isAndroidEntry } from './android/analyze-android';
import { UnreadablePackageError } from './errors';
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
 * a `package.unreadable` (or `package.wrong-platform`) finding, so a scan job always completes.
 */
export async function analyzePackage(filePath: string, platform: Platform, options: AnalyzeOptions = {}): Promise<StaticAnalysis> {
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
    // Anything else (a parser bug, an I/O error) must still end the scan with a finding, not a stuck job.
    return { findings: [unexpectedFailureFinding(platform, err instanceof Error ? err.message : String(err))], target: fallbackTarget };
  } finally {
    zip?.close();
  }
}
