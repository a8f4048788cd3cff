import type { Deps } from '../core/deps';
import type { BuildDoc } from '../data/builds-repo';
import type { ScanDoc, ScanEngine } from '../data/scans-repo';
import { buildOrderKey, type ScanJobDoc } from '../data/scan-jobs-repo';
import { compareWithBaseline, type Finding } from '../scan';

type Repos = { repos: Pick<Deps['repos'], 'scans' | 'suppressions' | 'scanJobs'> };

/** The compared part of a scan: its findings fingerprinted, marked and suppressed, and the diff with its baseline. */
export type ComparedFindings = Pick<ScanDoc, 'findings' | 'baseline' | 'diff' | 'fixedFindings' | 'unsuppressed'> & { buildCreatedAt?: Date };

export interface CompareKey {
  appId: string;
  engine: ScanEngine;
  target: ScanDoc['target'];
  build: Pick<BuildDoc, '_id' | 'createdAt'>;
  /** The package part of the fingerprints: the target's name for static scans, previewPackage() for previews. */
  pkg: string;
  /** When the scan is made: suppressions unexpired then apply. */
  at: Date;
  /** False for a package that was not analysed: compared with nothing, and never a baseline (no buildCreatedAt). */
  comparable: boolean;
  /**
   * Whether the build is a release build (src/services/builds/release.ts). Every build is compared with the latest
   * earlier release build's scan; only a release build's scan is kept as a baseline (no buildCreatedAt otherwise), so
   * a branch job cannot make its findings read as `existing` in the release.
   */
  release: boolean;
}

/**
 * Compares a scan's findings with its baseline (one indexed read, ScansRepo.baselineFor) and applies the app's
 * suppressions unexpired at the scan's time (one indexed read per scan), both read at once.
 */
export async function compareScan(deps: Repos, key: CompareKey, findings: readonly Finding[]): Promise<ComparedFindings> {
  const [baseline, suppressions] = await Promise.all([
    key.comparable
      ? deps.repos.scans.baselineFor({ appId: key.appId, engine: key.engine, platform: key.target.platform, name: key.target.name }, { at: key.build.createdAt, buildId: key.build._id })
      : Promise.resolve(null),
    deps.repos.suppressions.activeAt(key.appId, key.at),
  ]);
  const active = suppressions.map((s) => ({ id: s._id, findingId: s.findingId, fingerprint: s.fingerprint, reason: s.reason, expiresAt: s.expiresAt }));
  const compared = compareWithBaseline(findings, key.pkg, baseline, active);
  return {
    ...compared,
    baseline: baseline && { scanId: baseline._id, buildId: baseline.buildId },
    ...(key.comparable && key.release ? { buildCreatedAt: key.build.createdAt } : {}),
  };
}

/**
 * The job a finished analysis waits for before it takes its baseline, if any: the latest-registered unfinished job of
 * an earlier release build of the same app, platform and package, or of a package not read yet. Its scan may be this
 * one's baseline, so this one waits for it (a deferral), whatever order the analyses finished in; no other build's
 * scan is a baseline, so nothing else is waited for. The earlier job always ends: its last attempt writes a scan.
 */
export async function scanToWaitFor(deps: Repos, job: Pick<ScanJobDoc, '_id' | 'appId'>, build: Pick<BuildDoc, '_id' | 'createdAt' | 'platform'>, pkg: string): Promise<string | null> {
  const wait = { appId: job.appId, platform: build.platform, package: pkg, buildOrder: buildOrderKey(build) };
  return (await deps.repos.scanJobs.jobToWaitFor(wait, job._id))?._id ?? null;
}
