import type { Collection, Db } from 'mongodb';
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
    ]);
  }
  async insert(doc: AppDoc): Promise<void> {
    await this.col.insertOne(doc);
  }
  findById(id: string): Promise<AppDoc | null> {
    return this.col.findOne({ _id: id });
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
