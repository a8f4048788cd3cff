import type { Finding } from '../../model/types';
import { UnreadablePackageError } from '../package/errors';
import { boolAt, dictAt, parsePlistDict, stringAt, type PlistDict } from './read-plist';

/**
 * The XML plist inside embedded.mobileprovision. The file is CMS SignedData around the plist;
 * the plist is stored verbatim, so its bytes are cut out rather than decoding the CMS structure.
 */
export function readProvisioningProfile(cms: Buffer, name: string): PlistDict {
  const start = cms.indexOf('<?xml');
  const endTag = '</plist>';
  const end = start < 0 ? -1 : cms.indexOf(endTag, start);
  if (start < 0 || end < 0) throw new UnreadablePackageError('corrupt-manifest', `${name} contains no XML property list`);
  return parsePlistDict(cms.subarray(start, end + endTag.length), name);
}

/** Distribution type and entitlements of the provisioning profile. */
export function provisionFindings(profile: PlistDict, now: Date): Finding[] {
  const out: Finding[] = [];
  const name = stringAt(profile, 'Name') ?? '(unnamed)';
  const entitlements = dictAt(profile, 'Entitlements') ?? {};
  const devices = Array.isArray(profile.ProvisionedDevices) ? profile.ProvisionedDevices.length : 0;
  const taskAllow = boolAt(entitlements, 'get-task-allow') === true;
  const aps = stringAt(entitlements, 'aps-environment');
  if (taskAllow) {
    out.push({
      id: 'ios.get-task-allow',
      severity: 'high',
      title: 'Debugger attachment is allowed',
      detail: `The provisioning profile "${name}" grants get-task-allow = true: any debugger can attach to the app and read or change its memory, keychain items in use and decrypted data.`,
      fix: 'Archive with the Release configuration and export with an App Store or Ad Hoc distribution profile (Xcode › Product › Archive › Distribute App); distribution profiles set get-task-allow to false.',
    });
  }
  if (devices > 0 && (taskAllow || aps === 'development')) {
    out.push({
      id: 'ios.development-profile',
      severity: 'medium',
      title: 'Signed with a development provisioning profile',
      detail: `The provisioning profile "${name}" lists ${devices} ProvisionedDevices${aps === 'development' ? ' and aps-environment = development' : ''}: it is a development build that runs only on those devices${aps === 'development' ? ' and receives push notifications from the sandbox APNs' : ''}.`,
      fix: 'Export the archive with an App Store Connect (or Enterprise) distribution profile instead of the development profile.',
    });
  } else if (aps === 'development') {
    out.push({
      id: 'ios.aps-development',
      severity: 'low',
      title: 'Push notifications use the development environment',
      detail: `Entitlements › aps-environment = development in "${name}": production APNs tokens will not work with this build.`,
      fix: 'Set aps-environment to production by exporting with a distribution profile (Xcode sets it from the profile).',
    });
  }
  if (boolAt(profile, 'ProvisionsAllDevices') === true) {
    out.push({
      id: 'ios.enterprise-profile',
      severity: 'medium',
      title: 'Signed with an in-house (Enterprise) profile',
      detail: `The provisioning profile "${name}" sets ProvisionsAllDevices = true: the IPA installs on any device outside the App Store, so a leaked file spreads freely.`,
      fix: 'Distribute through the App Store, TestFlight or Apple Business Manager custom apps; keep Enterprise profiles for internal apps on managed devices.',
    });
  }
  const expires = profile.ExpirationDate;
  if (expires instanceof Date && expires.getTime() < now.getTime()) {
    out.push({
      id: 'ios.profile-expired',
      severity: 'high',
      title: 'Provisioning profile has expired',
      detail: `The provisioning profile "${name}" expired on ${expires.toISOString().slice(0, 10)}; iOS refuses to launch an app whose profile has expired.`,
      fix: 'Regenerate the profile in the Apple Developer portal (Certificates, Identifiers & Profiles › Profiles), download it in Xcode and re-export the archive.',
    });
  }
  return out;
}
