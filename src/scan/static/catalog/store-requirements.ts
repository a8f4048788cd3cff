/**
 * Store requirements that move with the calendar, as data with their dates. A rule asks for the requirement in force
 * on the scan's date, so a scan made today and a scan of the same package made after the next deadline disagree for
 * the right reason, and adding next year's level is one line here (with its source), not a code change.
 *
 * Each table is ordered by `effective`; the entry in force is the last one whose date is on or before the scan's date
 * (dates are UTC midnights: a requirement applies from the start of its day).
 */
export type DatedRequirement<T> = Readonly<{ effective: string; source: string } & T>;

/**
 * Google Play: the targetSdkVersion new apps and updates must reach (phone and tablet apps; Wear OS and TV trail
 * by a level). Play refuses an upload below the level in force.
 */
export const PLAY_TARGET_SDK: readonly DatedRequirement<{ level: number }>[] = [
  { effective: '2023-08-31', level: 33, source: 'https://support.google.com/googleplay/android-developer/answer/11926878' },
  { effective: '2024-08-31', level: 34, source: 'https://support.google.com/googleplay/android-developer/answer/11926878' },
  { effective: '2025-08-31', level: 35, source: 'https://support.google.com/googleplay/android-developer/answer/11926878' },
  { effective: '2026-08-31', level: 36, source: 'https://support.google.com/googleplay/android-developer/answer/11926878' },
];

/**
 * Google Play: apps targeting `minTargetSdk` or later must support 16 KB memory pages (every native library's
 * PT_LOAD segments aligned to 16 KB, and stored libraries 16 KB-aligned in the APK), or the upload is refused.
 * Before the date the same libraries still crash on 16 KB devices (Android 15+), which is worth saying, less loudly.
 */
export const PLAY_16KB_PAGES: readonly DatedRequirement<{ minTargetSdk: number }>[] = [
  { effective: '2025-11-01', minTargetSdk: 35, source: 'https://developer.android.com/guide/practices/page-sizes' },
];

/**
 * App Store Connect: the iOS SDK an upload must be built with (Info.plist DTPlatformVersion, which Xcode writes from
 * the SDK it built with). Apple refuses an upload built with an older SDK.
 */
export const APP_STORE_MIN_SDK: readonly DatedRequirement<{ sdk: number; xcode: number }>[] = [
  { effective: '2024-04-29', sdk: 17, xcode: 15, source: 'https://developer.apple.com/news/upcoming-requirements/' },
  { effective: '2025-04-24', sdk: 18, xcode: 16, source: 'https://developer.apple.com/news/upcoming-requirements/' },
  { effective: '2026-04-28', sdk: 26, xcode: 26, source: 'https://developer.apple.com/ios/submit/' },
];

/** The entry in force on `at` (null before the first one). */
export function inForce<T>(table: readonly DatedRequirement<T>[], at: Date): DatedRequirement<T> | null {
  const day = at.toISOString().slice(0, 10);
  let current: DatedRequirement<T> | null = null;
  for (const entry of table) if (entry.effective <= day) current = entry;
  return current;
}
