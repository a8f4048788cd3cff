import type { Collection, Db, Filter } from 'mongodb';
import { ensureIndexes } from './db';

export const PLANS = ['hatchling', 'indie', 'startup', 'scale', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

export interface AppDoc {
  _id: string; // app_...
  name: string;
  plan: Plan;
  org: string;
  createdAt: Date;
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
  /** Dashboards: ids of every app, at most `cap` + 1 of them (the caller refuses beyond); the _id index serves it. */
  async ids(cap: number): Promise<string[]> {
    const docs = await this.col.find({}, { projection: { _id: 1 } }).sort({ _id: 1 }).limit(cap + 1).toArray();
    return docs.map((d) => d._id);
  }
}
