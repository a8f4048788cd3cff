import type { Collection, Db } from 'mongodb';

export type StaffRole = 'support' | 'admin';

export interface StaffDoc {
  _id: string; // the <id> part of stf_<id>_<secret>
  role: StaffRole;
  name: string | null;
  secretHash: string;
  createdAt: Date;
  revokedAt: Date | null;
}

export class StaffRepo {
  static readonly collectionName = 'staff';
  private readonly col: Collection<StaffDoc>;
  constructor(db: Db) {
    this.col = db.collection<StaffDoc>(StaffRepo.collectionName);
  }
  async ensureIndexes(): Promise<void> {}
  async insert(doc: StaffDoc): Promise<void> {
    await this.col.insertOne(doc);
  }
  findById(id: string): Promise<StaffDoc | null> {
    return this.col.findOne({ _id: id });
  }
}
