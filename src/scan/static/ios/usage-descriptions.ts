import type { Finding } from '../../model/types';
import type { BundleBinary } from './bundle-binaries';
import { stringAt, type PlistDict } from './read-plist';

/**
 * Protected resources whose purpose string App Store Connect requires at upload (ITMS-90683, "Missing Purpose String
 * in Info.plist"): its check is symbol-based, so linking the API is enough, whether or not the app calls it. A framework
 * is the evidence when all of it is the protected API; where a framework also holds unprotected APIs, the entry names
 * the classes that are the protected part (imported as _OBJC_CLASS_$_<Name> by Objective-C and Swift alike), so that
 * AVFoundation used for playback, CoreMotion's accelerometer or PhotosUI's out-of-process picker (which needs no
 * permission) do not fire. `keys`: any one of them satisfies the check.
 */
export const PURPOSE_STRINGS: ReadonlyArray<{ framework: string; classes?: string[]; keys: string[]; what: string; example: string }> = [
  { framework: 'AVFoundation', classes: ['AVCaptureDevice'], keys: ['NSCameraUsageDescription'], what: 'the camera', example: 'Scan receipts with the camera to add them to your expenses.' },
  { framework: 'AVFoundation', classes: ['AVAudioRecorder'], keys: ['NSMicrophoneUsageDescription'], what: 'the microphone', example: 'Record voice notes to attach to your tasks.' },
  { framework: 'CoreLocation', keys: ['NSLocationWhenInUseUsageDescription'], what: 'the location', example: 'Show stores near you on the map.' },
  { framework: 'Contacts', keys: ['NSContactsUsageDescription'], what: 'the contacts', example: 'Find friends who already use the app.' },
  { framework: 'Photos', keys: ['NSPhotoLibraryUsageDescription', 'NSPhotoLibraryAddUsageDescription'], what: 'the photo library', example: 'Choose a photo for your profile.' },
  { framework: 'EventKit', keys: ['NSCalendarsFullAccessUsageDescription', 'NSCalendarsWriteOnlyAccessUsageDescription', 'NSCalendarsUsageDescription'], what: 'the calendars', example: 'Add your bookings to your calendar.' },
  { framework: 'CoreBluetooth', keys: ['NSBluetoothAlwaysUsageDescription'], what: 'Bluetooth', example: 'Connect to your heart-rate monitor.' },
  { framework: 'CoreMotion', classes: ['CMMotionActivityManager', 'CMPedometer'], keys: ['NSMotionUsageDescription'], what: 'motion and fitness activity', example: 'Count your steps during a workout.' },
  { framework: 'HealthKit', keys: ['NSHealthShareUsageDescription'], what: 'Health data', example: 'Read your workouts to show weekly progress.' },
  { framework: 'Speech', keys: ['NSSpeechRecognitionUsageDescription'], what: 'speech recognition', example: 'Turn your dictated notes into text.' },
  { framework: 'AppTrackingTransparency', keys: ['NSUserTrackingUsageDescription'], what: 'tracking across apps', example: 'Your data is used to show you more relevant ads.' },
  { framework: 'LocalAuthentication', keys: ['NSFaceIDUsageDescription'], what: 'Face ID', example: 'Unlock your account with Face ID.' },
  { framework: 'HomeKit', keys: ['NSHomeKitUsageDescription'], what: 'HomeKit accessories', example: 'Control the lights in your home.' },
  { framework: 'MediaPlayer', classes: ['MPMediaLibrary', 'MPMediaQuery'], keys: ['NSAppleMusicUsageDescription'], what: 'the media library', example: 'Play songs from your library during workouts.' },
];

/** The class symbols the table looks for among the imports. */
export const PURPOSE_SYMBOLS: readonly string[] = PURPOSE_STRINGS.flatMap((p) => (p.classes ?? []).map((c) => `_OBJC_CLASS_$_${c}`));

/** `/System/Library/Frameworks/X.framework/X` (or a framework at any path) -> X. */
function frameworkOf(installName: string): string | null {
  return /(?:^|\/)([^/]+)\.framework\/[^/]+$/.exec(installName)?.[1] ?? null;
}

/**
 * ios.usage-description-missing: a Mach-O of the app (the executable, its frameworks and dylibs; extensions carry
 * their own Info.plist) links a protected API and Info.plist has no non-empty purpose string for it.
 */
export function usageDescriptionFindings(binaries: BundleBinary[], info: PlistDict, infoName: string): Finding[] {
  const findings: Finding[] = [];
  const inApp = binaries.filter((b) => b.role !== 'extension');
  for (const p of PURPOSE_STRINGS) {
    if (p.keys.some((k) => (stringAt(info, k) ?? '').trim() !== '')) continue;
    const users = inApp.filter((b) => b.slices.some((s) => s.dylibs.some((d) => frameworkOf(d.name) === p.framework)
      && (!p.classes || p.classes.some((c) => s.imports.includes(`_OBJC_CLASS_$_${c}`)))));
    if (!users.length) continue;
    const via = p.classes ? ` and uses ${p.classes.join(' / ')}` : '';
    findings.push({
      id: 'ios.usage-description-missing',
      severity: 'medium',
      title: `Purpose string missing: ${p.keys[0]}`,
      detail: `${users.map((u) => u.path).slice(0, 5).join(', ')} link${users.length === 1 ? 's' : ''} ${p.framework}${via}, which accesses ${p.what}, but ${infoName} has no ${p.keys.join(' or ')}: App Store Connect refuses the upload (ITMS-90683, Missing Purpose String in Info.plist) even when the app never calls it, and iOS terminates an app that asks for the permission without one.`,
      fix: `Add ${p.keys[0]} to Info.plist (Xcode › target › Info) with a sentence the user reads in the permission prompt, for example <key>${p.keys[0]}</key><string>${p.example}</string>; if only a third-party SDK links ${p.framework}, the key is still required.`,
      location: p.keys[0],
    });
  }
  return findings;
}
