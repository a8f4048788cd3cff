import path from 'node:path';
import type { Finding, IosSigning, NativeLibrary } from '../../model/types';
import { UnreadablePackageError } from '../package/errors';
import type { TrustAnchors } from './apple-chain';
import { scanIosSecrets } from './ios-secrets';
import type { PackageZip } from '../package/zip-reader';
import { atsFindings } from './ats-rules';
import { frameworkNames, nativeLibraries, readBundleBinaries } from './bundle-binaries';
import { bundleFindings } from './bundle-rules';
import { HARDENING_SYMBOLS, hardeningFindings } from './hardening-rules';
import { provisionFindings, readProvisioningProfile } from './provision-rules';
import { parsePlistDict, stringAt } from './read-plist';
import { checkIosSeal } from './seal';
import { privacyManifestFindings, sdkFindings } from './store-rules';
import { PURPOSE_SYMBOLS, usageDescriptionFindings } from './usage-descriptions';

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

/** Imported names the Mach-O rules look at: read once per file for all of them. */
const WATCHED = new Set([...HARDENING_SYMBOLS, ...PURPOSE_SYMBOLS]);

/** What an IPA holds: each Mach-O file and architecture (with the file's SHA-256), and its embedded frameworks' names. */
export type IosInventory = { nativeLibraries: NativeLibrary[]; frameworks: string[] };

export type IosAnalysis = { findings: Finding[]; target: { name: string; version: string | null }; signing: IosSigning | null; inventory: IosInventory };

/**
 * Analyses an opened IPA; throws UnreadablePackageError when its Info.plist cannot be read. The signer's chain is
 * checked against Apple's CAs unless `anchors` names others (tests that sign with a CA of their own).
 */
export async function analyzeIos(zip: PackageZip, filePath: string, now: Date, anchors?: TrustAnchors, onTarget?: (target: IosAnalysis['target']) => void): Promise<IosAnalysis> {
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
  const target = {
    name: stringAt(info, 'CFBundleIdentifier') ?? stringAt(info, 'CFBundleName') ?? appName,
    version: stringAt(info, 'CFBundleShortVersionString') ?? stringAt(info, 'CFBundleVersion') ?? null,
  };
  onTarget?.(target);
  const seal = await checkIosSeal(zip, appDir, executable, infoBytes, { now, anchors });
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
  const binaries = await readBundleBinaries(zip, appDir, executable, WATCHED);
  const frameworks = frameworkNames(zip, appDir);
  findings.push(
    ...hardeningFindings(binaries),
    ...usageDescriptionFindings(binaries, info, infoName),
    ...privacyManifestFindings(zip, appDir, frameworks),
    ...sdkFindings(info, now),
    ...(await scanIosSecrets(zip, appDir)),
  );
  return {
    findings,
    inventory: { nativeLibraries: nativeLibraries(binaries), frameworks },
    target,
    signing: seal.signing,
  };
}
