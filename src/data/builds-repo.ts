import type { Collection, Db, Filter } from 'mongodb';
import { ensureIndexes } from './db';
import type { BuildProvenance } from '../oidc/providers/model';

export type Platform = 'android' | 'ios';

export interface ArtifactDoc {
  status: 'pending' | 'uploaded';
  sizeBytes: number;
  sha256: string; // lowercase hex, as declared
  /** Where the bytes live in the artifact store (set at registration; the object exists only once uploaded). */
  storageKey: string;
  /** Expiry of the newest upload URL issued; the URL itself is a bearer credential and is never stored. */
  uploadUrlExpiresAt: Date;
  uploadedAt: Date | null;
  /** When its static scan job was queued; null/absent on an uploaded artifact means the queueing is still owed. */
  scanQueuedAt?: Date | null;
}

export interface BuildDoc {
  _id: string; // bld_...
  appId: string;
  platform: Platform;
  version: string;
  commit: string | null;
  status: 'succeeded';
  engine: 'preview';
  createdAt: Date;
  artifact: ArtifactDoc | null;
  /** Verified claims of the CI job that registered the build; null (or absent, older builds) for API keys. */
  provenance?: BuildProvenance | null;
  /**
   * A release build (src/services/builds/release.ts), decided at registration: only its scans are baselines and only
   * it records a package's signer. Absent on builds registered before the field existed: not release builds.
   */
  release?: boolean;
  /**
   * Grade of the build's static scan, copied here when the scan job writes it so that builds can be listed by grade
   * from an index; absent until then (and on builds scanned before the field existed).
   */
  grade?: string | null;
}

/** What App.builds narrows by; every field given must match. */
export interface BuildQuery {
  platform?: Platform;
  version?: string;
  grade?: string;
  from?: Date; // createdAt >= from
  to?: Date; // createdAt < to
}

/** Builds of every app. Each read takes the app it is restricted to (null: any app, staff only). */
export class BuildsRepo {
  static readonly collectionName = 'builds';
  private readonly col: Collection<BuildDoc>;
  constructor(db: Db) {
    this.col = db.collection<BuildDoc>(BuildsRepo.collectionName);
  }
  async ensureIndexes(): Promise<void> {
    await ensureIndexes(this.col, [
      // _id breaks ties of createdAt in the sort, so the index holds it too (no in-memory sort per app).
      { key: { appId: 1, createdAt: -1, _id: -1 }, name: 'app_created_id' },
      // Listing by one filter field, newest first: each is an equality ahead of the sort, so no field scans the app's
      // builds for a rare value (combined filters use the most selective of these and check the others).
      { key: { appId: 1, platform: 1, createdAt: -1, _id: -1 }, name: 'app_platform_created_id' },
      { key: { appId: 1, version: 1, createdAt: -1, _id: -1 }, name: 'app_version_created_id' },
      { key: { appId: 1, grade: 1, createdAt: -1, _id: -1 }, name: 'app_grade_created_id' },
      // The recovery sweep for uploads whose scan job was never queued.
      { key: { 'artifact.status': 1, 'artifact.scanQueuedAt': 1 }, name: 'artifact_scan_queued' },
    ]);
  }
  async insert(doc: BuildDoc): Promise<void> {
    await this.col.insertOne(doc);
  }
  findById(appId: string | null, id: string): Promise<BuildDoc | null> {
    return this.col.findOne(appId === null ? { _id: id } : { _id: id, appId });
  }
  listForApp(appId: string, limit: number): Promise<BuildDoc[]> {
    return this.col.find({ appId }).sort({ createdAt: -1, _id: -1 }).limit(limit).toArray();
  }
  /** Dashboards: builds of the app registered in [from, to), at most `cap` + 1 of them (the caller refuses beyond). */
  createdIn(appId: string, from: Date, to: Date, cap: number): AsyncIterable<Pick<BuildDoc, '_id' | 'createdAt'>> {
    return this.col.find({ appId, createdAt: { $gte: from, $lt: to } }, { projection: { _id: 1, createdAt: 1 } }).limit(cap + 1) as unknown as AsyncIterable<
      Pick<BuildDoc, '_id' | 'createdAt'>
    >;
  }
  /** Dashboards: these builds of the app, in one round trip (unknown ids and other apps' builds are left out). */
  findManyForApp(appId: string, ids: string[]): Promise<BuildDoc[]> {
    return this.col.find({ appId, _id: { $in: ids } }).toArray();
  }
  /** Builds among `ids`, of any app (the request's loader; callers check the app). */
  findByIds(ids: readonly string[]): Promise<BuildDoc[]> {
    return this.col.find({ _id: { $in: [...ids] } }).toArray();
  }
  /** Newest first by (createdAt, _id), keyset-paginated, limit + 1 read so the caller knows whether more follow. */
  page(appId: string, query: BuildQuery, limit: number, after?: { at: Date; id: string }): Promise<BuildDoc[]> {
    const filter = this.filter(appId, query);
    if (after) filter.$or = [{ createdAt: { $lt: after.at } }, { createdAt: after.at, _id: { $lt: after.id } }];
    return this.col.find(filter).sort({ createdAt: -1, _id: -1 }).limit(limit + 1).toArray();
  }
  count(appId: string, query: BuildQuery): Promise<number> {
    return this.col.countDocuments(this.filter(appId, query));
  }
  /** The newest build of the app (of one platform when given). */
  latest(appId: string, platform: Platform | null): Promise<BuildDoc | null> {
    const filter: Filter<BuildDoc> = { appId };
    if (platform) filter.platform = platform;
    return this.col.find(filter).sort({ createdAt: -1, _id: -1 }).limit(1).next();
  }
  /** Copies the grade of the build's static scan onto it (the scan job, once the scan is written). */
  async setGrade(appId: string, id: string, grade: string): Promise<void> {
    await this.col.updateOne({ _id: id, appId }, { $set: { grade } });
  }
  private filter(appId: string, query: BuildQuery): Filter<BuildDoc> {
    const filter: Filter<BuildDoc> = { appId };
    if (query.platform) filter.platform = query.platform;
    if (query.version) filter.version = query.version;
    if (query.grade) filter.grade = query.grade;
    if (query.from || query.to) {
      filter.createdAt = { ...(query.from ? { $gte: query.from } : {}), ...(query.to ? { $lt: query.to } : {}) };
    }
    return filter;
  }
  /** A fresh upload URL was issued: its expiry is what reads report. Only while pending. */
  async setUploadUrlExpiry(appId: string, id: string, expiresAt: Date): Promise<BuildDoc | null> {
    return this.col.findOneAndUpdate(
      { _id: id, appId, 'artifact.status': 'pending' },
      { $set: { 'artifact.uploadUrlExpiresAt': expiresAt } },
      { returnDocument: 'after' },
    );
  }
  /**
   * The one transition pending -> uploaded: a single conditional update, so of any number of contenders exactly one
   * succeeds (true) and every other one sees false, even across instances.
   */
  /** Uploaded artifacts whose static scan job may not exist yet (a crash between upload and queueing). */
  /** Uploaded at or before `uploadedBefore` and never marked queued (artifact_scan_queued; the time is a residual filter). */
  listUploadedWithoutScanJob(limit: number, uploadedBefore: Date): Promise<BuildDoc[]> {
    return this.col.find({ 'artifact.status': 'uploaded', 'artifact.scanQueuedAt': null, 'artifact.uploadedAt': { $lte: uploadedBefore } }).limit(limit).toArray();
  }
  async markScanQueued(appId: string, id: string, at: Date): Promise<void> {
    await this.col.updateOne({ _id: id, appId }, { $set: { 'artifact.scanQueuedAt': at } });
  }
  async markUploaded(appId: string, id: string, at: Date): Promise<boolean> {
    const result = await this.col.updateOne(
      { _id: id, appId, 'artifact.status': 'pending' },
      { $set: { 'artifact.status': 'uploaded', 'artifact.uploadedAt': at } },
    );
    return result.modifiedCount === 1;
  }
}
