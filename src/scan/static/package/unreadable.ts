import type { Finding, Platform } from '../../model/types';
import type { UnreadablePackageError } from './errors';

const EXPECTED: Record<Platform, string> = {
  android: 'an APK (AndroidManifest.xml at the root) or an App Bundle (base/manifest/AndroidManifest.xml)',
  ios: 'an IPA (Payload/<Name>.app/Info.plist)',
};

/** The one finding of a package that could not be analysed, so a scan always completes. */
export function unreadableFinding(platform: Platform, err: UnreadablePackageError): Finding {
  return {
    id: 'package.unreadable',
    severity: 'high',
    title: 'Package could not be analysed',
    detail: `The uploaded file is not a readable ${platform} package: ${err.message.replace(/\.+$/, '')}. No other check could run, so this scan says nothing about the app's security.`,
    fix: `Upload the exact file your build produced: ${EXPECTED[platform]}, unmodified (e.g. app/build/outputs/apk/release/app-release.apk or the .ipa exported by Xcode).`,
  };
}

export function wrongPlatformFinding(declared: Platform): Finding {
  const actual: Platform = declared === 'android' ? 'ios' : 'android';
  return {
    id: 'package.wrong-platform',
    severity: 'high',
    title: `Package is ${actual === 'ios' ? 'an iOS app' : 'an Android app'}, but the build is ${declared}`,
    detail: `The build was registered with platform "${declared}" but the uploaded file is ${EXPECTED[actual]}; it was not analysed as ${declared}.`,
    fix: `Register the build with platform "${actual}", or upload ${EXPECTED[declared]} for this build.`,
  };
}

export function unexpectedFailureFinding(platform: Platform, message: string): Finding {
  return {
    id: 'package.unreadable',
    severity: 'high',
    title: 'Package could not be analysed',
    detail: `Reading the ${platform} package failed: ${message.replace(/\.+$/, '')}.`,
    fix: `Upload the exact file your build produced: ${EXPECTED[platform]}.`,
  };
}
