import type { Collection, Db } from 'mongodb';
import { ensureIndexes, insertIfAbsent } from './db';
import type { Finding, Platform } from '../scan';

export type ScanEngine = 'preview' | 'static';

export interface ScanDoc {
  _id: string; // scn_...
  appId: string;
  buildId: string;
  engine: ScanEngine;
  grade: string;
  score: number;
  target: { platform: Platform; name: string; version: string | null };
  findings: Finding[];
  createdAt: Date;
}

/** Scans of every app. Each read takes the app it is restricted to (null: any app, staff only). */
export class ScansRepo {
  static readonly collectionName = 'scans';
  private readonly col: Collection<ScanDoc>;
  constructor(db: Db) {
    this.col = db.collection<ScanDoc>(ScansRepo.collectionName);
  }
  async ensureIndexes(): Promise<void> {
    await ensureIndexes(this.col, [{ key: { appId: 1, buildId: 1, createdAt: 1, engine: 1, _id: 1 }, name: 'app_build_created_engine_id' }]);
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
