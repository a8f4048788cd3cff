import type { RequestContext } from '../context';

/** The registered build a device's versionCode names, as the answer shows it. */
export interface MatchedBuild {
  id: string;
  version: string;
  grade: string | null;
}

/**
 * The newest build of the app whose static scan read this package and versionCode (the version the device reports:
 * Play Integrity's `appIntegrity.versionCode`, key attestation's package version); null when none was registered
 * and scanned, which the verdict calls `version_unregistered`.
 */
export function buildForVersionCode(ctx: RequestContext, appId: string, packageName: string, versionCode: number): Promise<MatchedBuild | null> {
  return ctx.deps.instance.attestFacts.found(`build\n${appId}\n${packageName}\n${versionCode}`, () => readBuild(ctx, appId, packageName, versionCode));
}

async function readBuild(ctx: RequestContext, appId: string, packageName: string, versionCode: number): Promise<MatchedBuild | null> {
  const scan = await ctx.repos.scans.latestStaticForVersionCode(appId, packageName, versionCode);
  if (!scan) return null;
  const build = await ctx.repos.builds.findById(appId, scan.buildId);
  return build ? { id: build._id, version: build.version, grade: build.grade ?? scan.grade ?? null } : null;
}

/**
 * The recorded signer of an Android package (the signers registry: first verified release scan, or an operator's
 * re-key), as lowercase hex SHA-256s; null when none is recorded.
 */
export function recordedAndroidSigners(ctx: RequestContext, appId: string, packageName: string): Promise<string[] | null> {
  return ctx.deps.instance.attestFacts.found(`signer\n${appId}\n${packageName}`, async () => {
    const doc = await ctx.repos.signers.find({ appId, platform: 'android', package: packageName });
    return doc ? doc.identity.split(' ').filter(Boolean) : null;
  });
}
