import type { Collection, Db, Filter } from 'mongodb';
import { ensureIndexes, insertIfAbsent } from './db';
import type { FindingRef, Platform, ScanFinding } from '../scan';
import type { ScanInventory, ScanSigning } from '../scan/model/types';
import type { SignerContinuity } from './signers-repo';

export type ScanEngine = 'preview' | 'static';

export type ScanBaselineRef = { scanId: string; buildId: string };
export type ScanDiffCounts = { new: number; existing: number; fixed: number };

/** What a baseline read returns: the scan's id and build, and each finding's rule, title, fingerprint and suppression. */
export type BaselineScan = Pick<ScanDoc, '_id' | 'buildId'> & { findings: Array<Pick<ScanFinding, 'id' | 'title' | 'fingerprint' | 'suppressed'>> };

export interface ScanDoc {
  _id: string; // scn_...
  appId: string;
  buildId: string;
  engine: ScanEngine;
  grade: string;
  score: number;
  /**
   * `versionCode`: static scans of an Android package analysed to the end, the long version code its manifest declares
   * (src/scan/static/android/version-code.ts), by which device attestation finds the build; null otherwise; absent on
   * previews and on scans stored before. Internal: the API's target is platform, name and version.
   */
  target: { platform: Platform; name: string; version: string | null; versionCode?: number | null };
  findings: ScanFinding[];
  /**
   * When the scanned build was registered: the baseline of a scan is the latest scan of a build registered before
   * (by this, then buildId), whatever order scans complete in. Absent on scans stored before baselines existed, on
   * scans of packages not analysed and on scans of builds that are not release builds: such a scan is never a baseline.
   */
  buildCreatedAt?: Date;
  /** The scan the findings were compared with; null when none; absent on scans stored before baselines existed. */
  baseline?: ScanBaselineRef | null;
  diff?: ScanDiffCounts | null;
  fixedFindings?: FindingRef[];
  /** Findings suppressed in the baseline whose suppression no longer applies. */
  unsuppressed?: FindingRef[];
  /** Static scans: who signed the package (docs/scan-evidence.md); null for previews and packages not analysed, absent on scans stored before. */
  signing?: ScanSigning | null;
  /** Static scans: what signing continuity concluded; null for previews and packages not analysed, absent on scans stored before. */
  signerContinuity?: SignerContinuity | null;
  /** Static scans: what the package holds (docs/scan-evidence.md); null for previews and packages not analysed, absent on scans stored before. */
  inventory?: ScanInventory | null;
  createdAt: Date;
}

/** The static scan an attested versionCode names (ScansRepo.latestStaticForVersionCode). */
export type VersionCodeScan = {
  buildId: string;
  grade: string;
  /** The package's versionName. */
  version: string | null;
};

/** Scans of every app. Each read takes the app it is restricted to (null: any app, staff only). */
export class ScansRepo {
  static readonly collectionName = 'scans';
  private readonly col: Collection<ScanDoc>;
  constructor(db: Db) {
    this.col = db.collection<ScanDoc>(ScansRepo.collectionName);
  }
  async ensureIndexes(): Promise<void> {
    await ensureIndexes(this.col, [
      { key: { appId: 1, buildId: 1, createdAt: 1, engine: 1, _id: 1 }, name: 'app_build_created_engine_id' },
      // App.scans, newest first, of every engine or of one.
      { key: { appId: 1, createdAt: -1, _id: -1 }, name: 'app_created_id' },
      { key: { appId: 1, engine: 1, createdAt: -1, _id: -1 }, name: 'app_engine_created_id' },
      // The baseline of a scan: the latest of an earlier-registered build, of one app, engine, platform and package.
      { key: { appId: 1, engine: 1, 'target.platform': 1, 'target.name': 1, buildCreatedAt: -1, buildId: -1 }, name: 'app_engine_target_build_created' },
      // The build a device attests: the newest static scan of one app, package and version code.
      { key: { appId: 1, engine: 1, 'target.platform': 1, 'target.name': 1, 'target.versionCode': 1, createdAt: -1, _id: -1 }, name: 'app_engine_target_code_created' },
    ]);
  }
  /**
   * Writes a scan whose id is decided by the caller. A second write of the same id (a retried job that had
   * already written its scan before it crashed) is a no-op: false, and the first scan stays as it was.
   */
  insertOnce(doc: ScanDoc): Promise<boolean> {
    return insertIfAbsent(this.col, doc);
  }
  findById(appId: string | null, id: string): Promise<ScanDoc | null> {
    return this.col.findOne(appId === null ? { _id: id } : { _id: id, appId });
  }
  /** Scans among `ids`, of any app (the request's loader; callers check the app). */
  findByIds(ids: readonly string[]): Promise<ScanDoc[]> {
    return this.col.find({ _id: { $in: [...ids] } }).toArray();
  }
  /**
   * Scans of several builds in one round trip, unordered (the caller groups and sorts them): the request's loader of
   * a page of builds. At most MAX_SCANS_PER_BUILD per build are expected; more are cut.
   */
  listForBuilds(appIds: readonly string[], buildIds: readonly string[]): Promise<ScanDoc[]> {
    return this.col
      .find({ appId: { $in: [...new Set(appIds)] }, buildId: { $in: [...buildIds] } })
      .limit(100 * buildIds.length)
      .toArray();
  }
  /** Newest first by (createdAt, _id), keyset-paginated, limit + 1 read so the caller knows whether more follow. */
  page(appId: string, engine: ScanEngine | null, limit: number, after?: { at: Date; id: string }): Promise<ScanDoc[]> {
    const filter: Filter<ScanDoc> = { appId };
    if (engine) filter.engine = engine;
    if (after) filter.$or = [{ createdAt: { $lt: after.at } }, { createdAt: after.at, _id: { $lt: after.id } }];
    return this.col.find(filter).sort({ createdAt: -1, _id: -1 }).limit(limit + 1).toArray();
  }
  /**
   * The baseline of a scan of a build registered at `before.at`: the latest scan of the same app, engine, platform and
   * package whose build was registered before it (by registration time, then build id: a total order, whatever order
   * the scans completed in). One indexed read. Scans without buildCreatedAt (stored before baselines existed, of a
   * package not analysed, or of a build that is not a release build) never match.
   */
  async baselineFor(key: { appId: string; engine: ScanEngine; platform: Platform; name: string }, before: { at: Date; buildId: string }): Promise<BaselineScan | null> {
    const [latest] = await this.col
      .find<BaselineScan>({
        appId: key.appId,
        engine: key.engine,
        'target.platform': key.platform,
        'target.name': key.name,
        $or: [{ buildCreatedAt: { $lt: before.at } }, { buildCreatedAt: before.at, buildId: { $lt: before.buildId } }],
      })
      .sort({ buildCreatedAt: -1, buildId: -1 })
      .limit(1)
      // Only what the comparison reads: a baseline's details, fixes, signing and inventory stay in the database.
      .project<BaselineScan>({ _id: 1, buildId: 1, 'findings.id': 1, 'findings.title': 1, 'findings.fingerprint': 1, 'findings.suppressed': 1 })
      .toArray();
    return latest ?? null;
  }
  /**
   * The newest static scan of an Android package of the app whose manifest declares this long version code (what
   * Play Integrity's appIntegrity.versionCode and key attestation's packageInfos version report): which registered
   * build a device runs. Only a package analysed to the end records a version code (src/services/static-scans.ts),
   * so an unreadable or incomplete scan never matches, nor does an iOS scan, a preview or a scan stored before the
   * field. Several builds may share a code (a re-upload, a debug and a release build): the newest scan wins. One
   * indexed read.
   */
  async latestStaticForVersionCode(appId: string, packageName: string, versionCode: number): Promise<VersionCodeScan | null> {
    const [latest] = await this.col
      .find({ appId, engine: 'static', 'target.platform': 'android', 'target.name': packageName, 'target.versionCode': versionCode })
      .sort({ createdAt: -1, _id: -1 })
      .limit(1)
      .project<Pick<ScanDoc, 'buildId' | 'grade' | 'target'>>({ _id: 0, buildId: 1, grade: 1, target: 1 })
      .toArray();
    return latest ? { buildId: latest.buildId, grade: latest.grade, version: latest.target.version } : null;
  }
  count(appId: string, engine: ScanEngine | null): Promise<number> {
    const filter: Filter<ScanDoc> = { appId };
    if (engine) filter.engine = engine;
    return this.col.countDocuments(filter);
  }
  /**
   * Scans of one build, oldest first. The preview scan is always made before the static one, so `engine` breaks
   * ties of equal timestamps ("preview" < "static") and the order is stable.
   */
  listForBuild(appId: string, buildId: string): Promise<ScanDoc[]> {
    return this.col.find({ appId, buildId }).sort({ createdAt: 1, engine: 1, _id: 1 }).limit(100).toArray();
  }
  /**
   * Dashboards: the static scans of these builds (of these apps), grade and time only, for the caller to keep each
   * build's newest. Builds are batched by the caller; a build has one static scan per upload, so the answer is small.
   */
  staticScansOf(appIds: string[], buildIds: string[]): Promise<Pick<ScanDoc, '_id' | 'buildId' | 'grade' | 'createdAt'>[]> {
    return this.col
      .find({ appId: { $in: appIds }, buildId: { $in: buildIds }, engine: 'static' }, { projection: { _id: 1, buildId: 1, grade: 1, createdAt: 1 } })
      .toArray();
  }
}
