import type { Collection, Db, Filter } from 'mongodb';
import { ensureIndexes } from './db';
import type { Platform } from './builds-repo';

export const PLANS = ['hatchling', 'indie', 'startup', 'scale', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

export interface AppDoc {
  _id: string; // app_...
  name: string;
  plan: Plan;
  org: string;
  createdAt: Date;
  /**
   * Its newest build (by createdAt, then id), kept by build registration and the scan job so that dashboards read one
   * document per app: null without builds; absent on apps created before the field existed (read once the old way,
   * then written).
   */
  latestBuild?: LatestBuildDoc | null;
}

/** What dashboards need of an app's newest build; grade is that of its static scan, null until it has one. */
export interface LatestBuildDoc {
  id: string;
  createdAt: Date;
  platform: Platform;
  grade: string | null;
}

/** What appsConnection narrows by; both fields given must match. */
export interface AppQuery {
  plan?: Plan;
  org?: string;
}

/** Apps are the tenants: every other collection is scoped by appId. */
export class AppsRepo {
  static readonly collectionName = 'apps';
  private readonly col: Collection<AppDoc>;
  constructor(db: Db) {
    this.col = db.collection<AppDoc>(AppsRepo.collectionName);
  }
  async ensureIndexes(): Promise<void> {
    await ensureIndexes(this.col, [
      { key: { org: 1, createdAt: -1 }, name: 'org_created' },
      { key: { createdAt: -1 }, name: 'created' }, // staff listing of every app, newest first
      // appsConnection: keyset pages on (createdAt, _id), of every app, of one org or of one plan.
      { key: { createdAt: -1, _id: -1 }, name: 'created_id' },
      { key: { org: 1, createdAt: -1, _id: -1 }, name: 'org_created_id' },
      { key: { plan: 1, createdAt: -1, _id: -1 }, name: 'plan_created_id' },
    ]);
  }
  async insert(doc: AppDoc): Promise<void> {
    await this.col.insertOne(doc);
  }
  findById(id: string): Promise<AppDoc | null> {
    return this.col.findOne({ _id: id });
  }
  /** Apps among `ids` (the request's loader). */
  findByIds(ids: readonly string[]): Promise<AppDoc[]> {
    return this.col.find({ _id: { $in: [...ids] } }).toArray();
  }
  /** Newest first by (createdAt, _id), keyset-paginated, limit + 1 read so the caller knows whether more follow. */
  page(query: AppQuery, limit: number, after?: { at: Date; id: string }): Promise<AppDoc[]> {
    const filter = this.filter(query);
    if (after) filter.$or = [{ createdAt: { $lt: after.at } }, { createdAt: after.at, _id: { $lt: after.id } }];
    return this.col.find(filter).sort({ createdAt: -1, _id: -1 }).limit(limit + 1).toArray();
  }
  /** Every app from the collection's metadata (no scan); of a plan or org from its index. */
  count(query: AppQuery): Promise<number> {
    if (query.org) return this.col.countDocuments({ org: query.org, ...(query.plan ? { plan: query.plan } : {}) });
    if (query.plan) return this.col.countDocuments({ plan: query.plan });
    return this.col.estimatedDocumentCount();
  }
  private filter(query: AppQuery): Filter<AppDoc> {
    const filter: Filter<AppDoc> = {};
    if (query.plan) filter.plan = query.plan;
    if (query.org) filter.org = query.org;
    return filter;
  }
  list(limit: number): Promise<AppDoc[]> {
    return this.col.find({}).sort({ createdAt: -1 }).limit(limit).toArray();
  }
  /**
   * Dashboards: each app's id and latest-build summary (absent on apps that predate it), at most `cap` + 1 apps (the
   * caller refuses beyond); the _id index serves it.
   */
  latestBuilds(cap: number): Promise<Pick<AppDoc, '_id' | 'latestBuild'>[]> {
    return this.col.find({}, { projection: { _id: 1, latestBuild: 1 } }).sort({ _id: 1 }).limit(cap + 1).toArray();
  }
  /**
   * Makes `build` the app's latest build unless a newer one (by createdAt, then id) is recorded already, so builds
   * registered at once leave the newest whatever order their writes land in. One conditional write: no read first.
   */
  async recordLatestBuild(appId: string, build: LatestBuildDoc): Promise<boolean> {
    const res = await this.col.updateOne(
      {
        _id: appId,
        $or: [
          { latestBuild: null }, // null or absent
          { 'latestBuild.createdAt': { $lt: build.createdAt } },
          { 'latestBuild.createdAt': build.createdAt, 'latestBuild.id': { $lt: build.id } },
        ],
      },
      { $set: { latestBuild: build } },
    );
    return res.modifiedCount === 1;
  }
  /** Writes the summary of an app that predates it, unless something wrote one meanwhile. */
  async initLatestBuild(appId: string, build: LatestBuildDoc | null): Promise<boolean> {
    const res = await this.col.updateOne({ _id: appId, latestBuild: { $exists: false } }, { $set: { latestBuild: build } });
    return res.modifiedCount === 1;
  }
  /** The static grade of a build, on its app's summary while that build is still the latest. */
  async setLatestBuildGrade(appId: string, buildId: string, grade: string): Promise<void> {
    await this.col.updateOne({ _id: appId, 'latestBuild.id': buildId }, { $set: { 'latestBuild.grade': grade } });
  }
}
