import type { Finding } from '../../model/types';

export type SignatureSchemes = { v1: boolean; v2: boolean; v3: boolean };

/** Which signature schemes an APK carries, judged against the Android versions it installs on. */
export function schemeFindings(s: SignatureSchemes, minSdk: number, targetSdk: number): Finding[] {
  if (!s.v1 && !s.v2 && !s.v3) return [unsignedFinding('APK')];
  const out: Finding[] = [];
  if (s.v1 && !s.v2 && !s.v3 && (minSdk < 24 || targetSdk >= 30)) {
    const reasons = [
      minSdk < 24 ? `minSdkVersion ${minSdk} lets it install on Android 5.0-8.0, where a v1-only APK can be altered without breaking its signature (Janus, CVE-2017-13156)` : '',
      targetSdk >= 30 ? `targetSdkVersion ${targetSdk} requires an APK Signature Scheme v2+ signature, so Android 11 and later refuse to install it` : '',
    ].filter(Boolean);
    out.push({
      id: 'android.v1-only-signature',
      severity: 'high',
      title: 'APK carries only a v1 (JAR) signature',
      detail: `The APK has no APK Signing Block (no v2/v3 signature): ${reasons.join('; ')}.`,
      fix: 'Sign with apksigner (not jarsigner), which adds v2 and v3 signatures: `apksigner sign --ks release.jks --v2-signing-enabled true --v3-signing-enabled true app.apk`, and zipalign before signing.',
    });
  }
  if (!s.v1 && minSdk < 24) {
    out.push({
      id: 'android.missing-v1-signature',
      severity: 'medium',
      title: 'APK lacks the v1 signature older devices need',
      detail: `minSdkVersion is ${minSdk} but the APK has no v1 (JAR) signature; Android 6.0 and older only verify v1, so the APK fails to install on API ${minSdk}-23.`,
      fix: 'Sign with `apksigner sign --v1-signing-enabled true …` (apksigner enables it by default for minSdk < 24), or raise minSdk to 24.',
    });
  }
  return out;
}

export function unsignedFinding(kind: 'APK' | 'App Bundle'): Finding {
  return {
    id: 'android.unsigned',
    severity: 'high',
    title: `${kind} is not signed`,
    detail: kind === 'APK'
      ? 'No v1 signature file (META-INF/*.RSA, *.DSA, *.EC) and no APK Signing Block were found; Android refuses to install an unsigned APK and its origin cannot be verified.'
      : 'No JAR signature (META-INF/*.RSA, *.DSA, *.EC) was found; Google Play requires bundles signed with your upload key, and the uploader cannot be verified.',
    fix: kind === 'APK'
      ? 'Sign the release build: configure signingConfigs.release in build.gradle, or run `zipalign -p 4 in.apk out.apk && apksigner sign --ks release.jks out.apk`.'
      : 'Sign the bundle with your upload key: configure signingConfigs.release in build.gradle, or run `jarsigner -keystore upload.jks app.aab upload`.',
  };
}

/**
 * Entries under META-INF/ that the JAR signature does not cover, as apksig warns of them (low): the signature
 * verifies, but these files can be changed or added by anyone after signing, so nothing read from them is vouched
 * for (a ServiceLoader file, a Kotlin module, a properties file a library loads).
 */
export function unprotectedEntriesFinding(entries: readonly string[]): Finding[] {
  if (entries.length === 0) return [];
  const shown = entries.slice(0, 10).join(', ');
  return [{
    id: 'android.jar-unprotected-entry',
    severity: 'low',
    title: 'Files under META-INF/ are not covered by the JAR signature',
    detail: `${shown}${entries.length > 10 ? `, and ${entries.length - 10} more` : ''}: not listed in META-INF/MANIFEST.MF, so they can be changed or added after signing without breaking the v1 signature (apksigner verify warns of each).`,
    fix: 'Sign the package again after every file is in place (apksigner sign as the last step), and do not add files under META-INF/ afterwards; move files the app reads out of META-INF/.',
    location: entries[0],
  }];
}
