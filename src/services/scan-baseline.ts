import type { Deps } from '../core/deps';
import type { BuildDoc } from '../data/builds-repo';
import type { ScanDoc, ScanEngine } from '../data/scans-repo';
import type { ScanJobDoc } from '../data/scan-jobs-repo';
import { compareWithBaseline, type Finding } from '../scan';

type Repos = { repos: Pick<Deps['repos'], 'scans' | 'suppressions' | 'scanJobs' | 'builds'> };

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
 * How many unfinished jobs of an app are looked at. Jobs of one app run one at a time per instance while other apps
 * wait (JobRunner), so an app rarely has more; beyond it, the oldest-registered of those read still decide.
 */
const UNFINISHED_JOBS_READ = 200;

/**
 * Whether a release build of the same app and platform registered before this one (by createdAt, then id) still has
 * its static scan to make: its scan may be this one's baseline, so this one waits for it (a deferral), whatever order
 * the analyses finished in. Other builds' scans are never baselines: nothing waits for them. The earlier job always
 * ends: its last attempt writes a scan.
 */
export async function earlierScanPending(deps: Repos, job: Pick<ScanJobDoc, '_id' | 'appId'>, build: Pick<BuildDoc, '_id' | 'createdAt' | 'platform'>): Promise<boolean> {
  const unfinished = await deps.repos.scanJobs.unfinishedOfApp(job.appId, job._id, UNFINISHED_JOBS_READ);
  if (!unfinished.length) return false;
  const builds = await deps.repos.builds.findManyForApp(job.appId, unfinished.map((j) => j.buildId));
  return builds.some(
    (b) => b.release === true && b.platform === build.platform && (b.createdAt < build.createdAt || (b.createdAt.getTime() === build.createdAt.getTime() && b._id < build._id)),
  );
}
