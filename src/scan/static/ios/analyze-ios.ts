import path from 'node:path';
import type { Finding, IosSigning } from '../../types';
import { UnreadablePackageError } from '../errors';
import type { PackageZip } from '../zip-reader';
import { atsFindings } from './ats-rules';
import { bundleFindings } from './bundle-rules';
import { provisionFindings, readProvisioningProfile } from './provision-rules';
import { parsePlistDict, stringAt } from './read-plist';

const INFO_PLIST = /^Payload\/[^/]+\.app\/Info\.plist$/;
const PROFILE = /^Payload\/[^/]+\.app\/embedded\.mobileprovision$/;
/** The seal of a code-signed bundle (codesign writes it); only its presence is checked. */
const CODE_RESOURCES = /^Payload\/[^/]+\.app\/_CodeSignature\/CodeResources$/;

/** Entries the iOS analysis may read (the main app's Info.plist and provisioning profile) or look for. */
export function isIosEntry(name: string): boolean {
  return INFO_PLIST.test(name) || PROFILE.test(name) || CODE_RESOURCES.test(name);
}

/** An app bundle that codesign never sealed: no device installs it, and nothing says who built it. */
function unsignedFinding(appDir: string): Finding {
  return {
    id: 'ios.unsigned',
    severity: 'high',
    title: 'App is not code-signed',
    detail: `${appDir}_CodeSignature/CodeResources is missing: the bundle was never sealed by codesign, so iOS refuses to install it and its origin cannot be verified (a simulator build, or an archive assembled by hand).`,
    fix: 'Export the archive signed for distribution: Xcode Product › Archive › Distribute App, or `xcodebuild -exportArchive` with an export options plist naming your team and method.',
  };
}

export function hasIosInfoPlist(zip: PackageZip): boolean {
  return zip.names().some((n) => INFO_PLIST.test(n));
}

/** Analyses an opened IPA; throws UnreadablePackageError when its Info.plist cannot be read. */
export async function analyzeIos(zip: PackageZip, filePath: string, now: Date): Promise<{ findings: Finding[]; target: { name: string; version: string | null }; signing: IosSigning | null }> {
  const infoName = zip.names().find((n) => INFO_PLIST.test(n));
  if (!infoName) throw new UnreadablePackageError('missing-manifest', 'no Payload/<Name>.app/Info.plist in the archive');
  const info = parsePlistDict(await zip.read(infoName, 'plist'), infoName);
  const findings = [...atsFindings(info), ...bundleFindings(info)];
  const appDir = infoName.slice(0, -'Info.plist'.length);
  if (!zip.has(`${appDir}_CodeSignature/CodeResources`)) findings.push(unsignedFinding(appDir));
  const profileName = `${appDir}embedded.mobileprovision`;
  if (zip.has(profileName)) {
    try {
      findings.push(...provisionFindings(readProvisioningProfile(await zip.read(profileName, 'provisioningProfile'), profileName), now));
    } catch (err) {
      if (!(err instanceof UnreadablePackageError)) throw err;
      findings.push({
        id: 'ios.profile-unreadable',
        severity: 'medium',
        title: 'Provisioning profile cannot be read',
        detail: `${profileName}: ${err.message}; its distribution type and entitlements could not be checked.`,
        fix: 'Re-export the archive from Xcode (Product › Archive › Distribute App) so that the profile is embedded unmodified.',
      });
    }
  }
  const appName = path.basename(appDir.replace(/\/$/, ''), '.app');
  return {
    findings,
    target: {
      name: stringAt(info, 'CFBundleIdentifier') ?? stringAt(info, 'CFBundleName') ?? appName,
      version: stringAt(info, 'CFBundleShortVersionString') ?? stringAt(info, 'CFBundleVersion') ?? null,
    },
    signing: null,
  };
}
