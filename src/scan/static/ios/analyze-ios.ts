import path from 'node:path';
import type { Finding, IosSigning } from '../../model/types';
import { UnreadablePackageError } from '../package/errors';
import type { PackageZip } from '../package/zip-reader';
import { atsFindings } from './ats-rules';
import { bundleFindings } from './bundle-rules';
import { provisionFindings, readProvisioningProfile } from './provision-rules';
import { parsePlistDict, stringAt } from './read-plist';
import { checkIosSeal } from './seal';

const INFO_PLIST = /^Payload\/[^/]+\.app\/Info\.plist$/;
const PROFILE = /^Payload\/[^/]+\.app\/embedded\.mobileprovision$/;
/** Everything inside an app bundle: the seal covers every file of the main app (and names its nested bundles). */
const IN_APP = /^Payload\/[^/]+\.app\//;

/** Entries the iOS analysis may read: every file of the app, since the seal is compared with all of them. */
export function isIosEntry(name: string): boolean {
  return IN_APP.test(name);
}

export function hasIosInfoPlist(zip: PackageZip): boolean {
  return zip.names().some((n) => INFO_PLIST.test(n));
}

/** Analyses an opened IPA; throws UnreadablePackageError when its Info.plist cannot be read. */
export async function analyzeIos(zip: PackageZip, filePath: string, now: Date): Promise<{ findings: Finding[]; target: { name: string; version: string | null }; signing: IosSigning | null }> {
  const infoName = zip.names().find((n) => INFO_PLIST.test(n));
  if (!infoName) throw new UnreadablePackageError('missing-manifest', 'no Payload/<Name>.app/Info.plist in the archive');
  const infoBytes = await zip.read(infoName, 'plist');
  const info = parsePlistDict(infoBytes, infoName);
  const findings = [...atsFindings(info), ...bundleFindings(info)];
  const appDir = infoName.slice(0, -'Info.plist'.length);
  const appName = path.basename(appDir.replace(/\/$/, ''), '.app');
  const declared = stringAt(info, 'CFBundleExecutable');
  // A name with a slash would leave the bundle; codesign takes the executable from the bundle's top level.
  const executable = declared && !declared.includes('/') ? declared : appName;
  const seal = await checkIosSeal(zip, appDir, executable, infoBytes);
  findings.push(...seal.findings);
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
  return {
    findings,
    target: {
      name: stringAt(info, 'CFBundleIdentifier') ?? stringAt(info, 'CFBundleName') ?? appName,
      version: stringAt(info, 'CFBundleShortVersionString') ?? stringAt(info, 'CFBundleVersion') ?? null,
    },
    signing: seal.signing,
  };
}
