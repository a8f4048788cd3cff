import type { Finding } from '../../model/types';
import type { PackageZip } from '../package/zip-reader';
import { APP_STORE_MIN_SDK, inForce } from '../catalog/store-requirements';
import { stringAt, type PlistDict } from './read-plist';

/**
 * ios.privacy-manifest-missing: no PrivacyInfo.xcprivacy at the top of the app bundle. App Store Connect requires one
 * from every app that uses a required-reason API (UserDefaults, file timestamps, disk space, system boot time: nearly
 * every app) and from each commonly used third-party SDK it embeds; frameworks without their own are named.
 */
export function privacyManifestFindings(zip: PackageZip, appDir: string, frameworks: string[]): Finding[] {
  if (zip.has(`${appDir}PrivacyInfo.xcprivacy`)) return [];
  const bare = frameworks.filter((f) => !zip.has(`${appDir}Frameworks/${f}.framework/PrivacyInfo.xcprivacy`));
  return [{
    id: 'ios.privacy-manifest-missing',
    severity: 'medium',
    title: 'App has no privacy manifest',
    detail: `${appDir}PrivacyInfo.xcprivacy is missing: the app declares neither the data it collects nor its reasons for using required-reason APIs (UserDefaults, file timestamps, disk space, system boot time), and App Store Connect rejects uploads that use those APIs without a declared reason (ITMS-91053).${bare.length ? ` Embedded frameworks without their own manifest: ${bare.slice(0, 8).join(', ')}${bare.length > 8 ? ` and ${bare.length - 8} more` : ''}; third-party SDKs on Apple's list need one each, signed by their vendor.` : ''}`,
    fix: 'Add a privacy manifest: Xcode › File › New › File › App Privacy (PrivacyInfo.xcprivacy) in the app target, listing NSPrivacyAccessedAPITypes with their reasons (for example NSPrivacyAccessedAPICategoryUserDefaults with reason CA92.1) and NSPrivacyCollectedDataTypes; update third-party SDKs to versions that ship their own manifest.',
  }];
}

/**
 * ios.sdk-outdated: the iOS SDK the app was built with (Info.plist DTPlatformVersion, else the version in DTSDKName,
 * both written by Xcode) is older than the one App Store Connect requires on the scan's date. Absent keys say
 * nothing (a bundle not built by Xcode is reported by other rules).
 */
export function sdkFindings(info: PlistDict, now: Date): Finding[] {
  const required = inForce(APP_STORE_MIN_SDK, now);
  const declared = stringAt(info, 'DTPlatformVersion') ?? /(\d+(?:\.\d+)*)$/.exec(stringAt(info, 'DTSDKName') ?? '')?.[1];
  const major = declared ? Number.parseInt(declared, 10) : NaN;
  if (!required || Number.isNaN(major) || major >= required.sdk) return [];
  return [{
    id: 'ios.sdk-outdated',
    severity: 'high',
    title: `Built with iOS ${declared} SDK, below the App Store's minimum (iOS ${required.sdk} SDK)`,
    detail: `Info.plist says the app was built with the iOS ${declared} SDK (DTPlatformVersion${stringAt(info, 'DTXcode') ? `, DTXcode ${stringAt(info, 'DTXcode')}` : ''}); since ${required.effective} App Store Connect refuses uploads built with an SDK older than iOS ${required.sdk} (${required.source}).`,
    fix: `Rebuild with Xcode ${required.xcode} or later (iOS ${required.sdk} SDK): install it, select it with xcode-select -s /Applications/Xcode.app, then archive and export again (Product › Archive). On CI, pick the Xcode ${required.xcode} image.`,
  }];
}
