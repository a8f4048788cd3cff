import type { Finding } from '../../model/types';
import { androidAttr, asBool, describeAttr, showValue } from '../package/xml-node';
import type { ManifestModel } from './manifest-model';
import { inForce, PLAY_TARGET_SDK } from '../catalog/store-requirements';

/** minSdk below this: devices without the security model the rules assume (medium). */
export const MIN_SDK_FLOOR = 24;
/** minSdk below this: pre-Lollipop devices without TLS 1.2 by default or SELinux enforcing (high). */
export const MIN_SDK_HIGH = 21;
/** targetSdk below this misses Android 12's mandatory android:exported and PendingIntent mutability (high). */
export const TARGET_SDK_HIGH = 31;

/** Application-level flags: debuggable, testOnly, allowBackup, cleartext traffic, SDK floors. */
export function applicationFindings(m: ManifestModel, hasNetworkSecurityConfig: boolean, now: Date): Finding[] {
  const app = m.application;
  const out: Finding[] = [];
  const debuggable = app ? androidAttr(app, 'debuggable') : undefined;
  if (asBool(debuggable) === true) {
    out.push({
      id: 'android.debuggable',
      severity: 'critical',
      title: 'Application is debuggable',
      detail: `<application ${describeAttr('debuggable', debuggable)}> in ${m.packageName}: any process with ADB access can attach a debugger (JDWP) and run code as the app with \`run-as\`, reading its private files and keys.`,
      fix: 'Remove android:debuggable from AndroidManifest.xml and build the release variant (`./gradlew assembleRelease`/`bundleRelease`); set `debuggable false` in the release buildType if it was overridden.',
    });
  }
  if (app && asBool(androidAttr(app, 'testOnly')) === true) {
    out.push({
      id: 'android.test-only',
      severity: 'high',
      title: 'Application is marked testOnly',
      detail: `<application android:testOnly="true">: the package was built for testing (e.g. from Android Studio's Run button); it installs only with \`adb install -t\` and Google Play rejects it.`,
      fix: 'Build the package with Gradle (`./gradlew assembleRelease` or `bundleRelease`) instead of Android Studio\'s Run output, and remove android:testOnly from the manifest.',
    });
  }
  out.push(...backupFindings(m), ...cleartextFindings(m, hasNetworkSecurityConfig), ...sdkFindings(m, now));
  return out;
}

function backupFindings(m: ManifestModel): Finding[] {
  const app = m.application;
  if (!app) return [];
  const declared = androidAttr(app, 'allowBackup');
  if (asBool(declared) === false) return [];
  const rules = androidAttr(app, 'dataExtractionRules') ?? androidAttr(app, 'fullBackupContent');
  const how = declared ? describeAttr('allowBackup', declared) : 'android:allowBackup is absent, and it defaults to true';
  return [
    {
      id: 'android.allow-backup',
      severity: rules ? 'low' : 'medium',
      title: 'App data can be extracted through backup',
      detail: `${how}${rules ? ` (backup rules ${showValue(rules)} limit what is copied)` : ' and no backup rules are set'}: \`adb backup\` (on devices before Android 12) and cloud/device-transfer backups copy the app's private files, databases and shared preferences.`,
      fix: 'Set android:allowBackup="false" on <application>, or keep backup and exclude secrets with android:dataExtractionRules="@xml/data_extraction_rules" (Android 12+) and android:fullBackupContent="@xml/backup_rules" (older).',
    },
  ];
}

function cleartextFindings(m: ManifestModel, hasNsc: boolean): Finding[] {
  const app = m.application;
  if (!app) return [];
  const attr = androidAttr(app, 'usesCleartextTraffic');
  const declared = asBool(attr);
  // With a network security config, Android 7.0+ ignores usesCleartextTraffic; the config decides.
  if (hasNsc && m.minSdk >= 24) return [];
  const scope = hasNsc ? ` (the network security config overrides it on Android 7.0+, but devices on API ${m.minSdk}-23 use it)` : '';
  if (declared === true) {
    return [
      {
        id: 'android.cleartext-traffic',
        severity: hasNsc ? 'medium' : 'high',
        title: 'Cleartext HTTP traffic is allowed',
        detail: `<application ${describeAttr('usesCleartextTraffic', attr)}>${scope}: the app may send and receive data over plain http://, readable and modifiable on the network.`,
        fix: 'Remove android:usesCleartextTraffic (or set it to "false") and use https:// everywhere; if one legacy host needs http, allow only it in a <domain-config cleartextTrafficPermitted="true"> of res/xml/network_security_config.xml.',
      },
    ];
  }
  if (declared === undefined && m.targetSdk < 28) {
    return [
      {
        id: 'android.cleartext-traffic',
        severity: 'medium',
        title: 'Cleartext HTTP traffic is allowed by default',
        detail: `android:usesCleartextTraffic is absent and targetSdkVersion is ${m.targetSdk} (< 28), so cleartext http:// traffic is permitted${scope}.`,
        fix: 'Add android:usesCleartextTraffic="false" to <application> (or raise targetSdkVersion to 28 or later, where cleartext is off by default).',
      },
    ];
  }
  return [];
}

function sdkFindings(m: ManifestModel, now: Date): Finding[] {
  const out: Finding[] = [];
  if (m.minSdk < MIN_SDK_FLOOR) {
    out.push({
      id: 'android.min-sdk',
      severity: m.minSdk < MIN_SDK_HIGH ? 'high' : 'medium',
      title: 'Minimum SDK allows outdated Android versions',
      detail: `minSdkVersion is ${m.minSdk}: the app installs on Android versions that no longer receive security patches${m.minSdk < MIN_SDK_HIGH ? ' and predate enforced TLS 1.2 and full SELinux (API < 21)' : ''}; it also keeps v1-only signature verification (Janus, CVE-2017-13156) relevant.`,
      fix: `Raise minSdk to ${MIN_SDK_FLOOR} or later in build.gradle (defaultConfig { minSdk = ${MIN_SDK_FLOOR} }).`,
    });
  }
  // The level Google Play requires on the scan's date (store-requirements.ts): below it, Play refuses the upload.
  const play = inForce(PLAY_TARGET_SDK, now);
  if (play && m.targetSdk < play.level) {
    out.push({
      id: 'android.target-sdk',
      severity: 'high',
      title: 'Target SDK is below the Google Play requirement',
      detail: `targetSdkVersion is ${m.targetSdk}; since ${play.effective} Google Play requires ${play.level} for new apps and updates and refuses this upload, and an old target keeps legacy behaviours (compatibility mode for permissions, storage and${m.targetSdk < TARGET_SDK_HIGH ? ' implicit component export' : ' background restrictions'}).`,
      fix: `Set targetSdk = ${play.level} in build.gradle (compileSdk ${play.level} too) and adapt to the behaviour changes of each skipped release (https://developer.android.com/about/versions); requirement: ${play.source}.`,
    });
  }
  return out;
}
