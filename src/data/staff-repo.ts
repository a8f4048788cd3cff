import type { Collection, Db } from 'mongodb';
import { ensureIndexes } from './db';

export type StaffRole = 'support' | 'admin';

/** A staff token's default lifetime: a working day, so a leaked token is not permanent control. */
export const STAFF_DEFAULT_TTL_MS = 12 * 3600_000;

export interface StaffDoc {
  _id: string; // the <id> part of stf_<id>_<secret>
  role: StaffRole;
  name: string | null;
  secretHash: string;
  createdAt: Date;
  /** Absent on tokens made before tokens expired: those end STAFF_DEFAULT_TTL_MS after creation (`staffExpiry`). */
  expiresAt?: Date;
  revokedAt: Date | null;
  lastUsedAt?: Date | null;
}

/** When a token stops working. */
export function staffExpiry(doc: StaffDoc): Date {
  return doc.expiresAt ?? new Date(doc.createdAt.getTime() + STAFF_DEFAULT_TTL_MS);
}

export class StaffRepo {
  static readonly collectionName = 'staff';
  private readonly col: Collection<StaffDoc>;
  constructor(db: Db) {
    this.col = db.collection<StaffDoc>(StaffRepo.collectionName);
  }
  async ensureIndexes(): Promise<void> {
    await ensureIndexes(this.col, [{ key: { createdAt: -1, _id: -1 }, name: 'created_id' }]);
  }
  async insert(doc: StaffDoc): Promise<void> {
    await this.col.insertOne(doc);
  }
  findById(id: string): Promise<StaffDoc | null> {
    return this.col.findOne({ _id: id });
  }
  /** Newest first. Staff are few (people, not machines): a bounded list, no pagination. */
  list(limit = 500): Promise<StaffDoc[]> {
    return this.col.find({}).sort({ createdAt: -1, _id: -1 }).limit(limit).toArray();
  }
  /** Revokes once: a second revocation keeps the first time. Returns the document as it now is. */
  async revoke(id: string, at: Date): Promise<StaffDoc | null> {
    await this.col.updateOne({ _id: id, revokedAt: null }, { $set: { revokedAt: at } });
    return this.findById(id);
  }
  /**
   * Records a use, at most once per `minGapMs`: one conditional write a minute per token instead of one per request
   * (the filter makes concurrent requests of the same minute a no-op).
   */
  async touch(id: string, at: Date, minGapMs: number): Promise<void> {
    const before = new Date(at.getTime() - minGapMs);
    await this.col.updateOne({ _id: id, $or: [{ lastUsedAt: null }, { lastUsedAt: { $exists: false } }, { lastUsedAt: { $lt: before } }] }, { $set: { lastUsedAt: at } });
  }
}
