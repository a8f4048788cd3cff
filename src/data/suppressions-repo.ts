import type { Collection, Db } from 'mongodb';
import { ensureIndexes, insertIntoFreeSlot } from './db';

/**
 * At most this many suppressions per app, expired ones included until deleted. Enforced by slots, not by counting
 * (see insertIntoFreeSlot). A legacy app accepting its findings one by one needs tens; 500 leaves room for rules with
 * many instances (one per component or domain) while keeping the once-per-scan read of them small.
 */
export const MAX_SUPPRESSIONS_PER_APP = 500;

export interface SuppressionDoc {
  _id: string; // sup_...
  appId: string;
  slot: number; // 0..MAX_SUPPRESSIONS_PER_APP-1, unique per app
  /** The rule id accepted. */
  findingId: string;
  /** The one instance accepted; null: every instance of the rule. */
  fingerprint: string | null;
  reason: string;
  expiresAt: Date;
  /** actorOf of the creator. */
  createdBy: string;
  createdAt: Date;
}

export type NewSuppression = Omit<SuppressionDoc, 'slot'>;

/** Accepted findings of apps. Every method is scoped to one app. */
export class SuppressionsRepo {
  static readonly collectionName = 'suppressions';
  private readonly col: Collection<SuppressionDoc>;
  constructor(db: Db) {
    this.col = db.collection<SuppressionDoc>(SuppressionsRepo.collectionName);
  }
  async ensureIndexes(): Promise<void> {
    await ensureIndexes(this.col, [
      { key: { appId: 1, slot: 1 }, name: 'app_slot', unique: true },
      // The list, newest first; also the app's read at scan time (appId prefix, expiresAt filtered in the index scan).
      { key: { appId: 1, createdAt: -1, _id: -1 }, name: 'app_created_id' },
      { key: { appId: 1, expiresAt: 1 }, name: 'app_expires' },
    ]);
  }

  /** Inserts into a free slot of its app; null when the app already has MAX_SUPPRESSIONS_PER_APP. */
  insertIfRoom(doc: NewSuppression): Promise<SuppressionDoc | null> {
    return insertIntoFreeSlot(this.col, doc, MAX_SUPPRESSIONS_PER_APP);
  }

  /** Newest first by (createdAt, _id), keyset-paginated, limit + 1 read so the caller knows whether more follow. */
  page(appId: string, limit: number, after?: { at: Date; id: string }): Promise<SuppressionDoc[]> {
    const filter = after ? { appId, $or: [{ createdAt: { $lt: after.at } }, { createdAt: after.at, _id: { $lt: after.id } }] } : { appId };
    return this.col.find(filter).sort({ createdAt: -1, _id: -1 }).limit(limit + 1).toArray();
  }

  count(appId: string): Promise<number> {
    return this.col.countDocuments({ appId });
  }

  /** The suppressions of the app unexpired at `at`: the one read a scan makes of them (at most the app's cap). */
  activeAt(appId: string, at: Date): Promise<SuppressionDoc[]> {
    return this.col.find({ appId, expiresAt: { $gt: at } }).limit(MAX_SUPPRESSIONS_PER_APP).toArray();
  }

  /** Returns the deleted suppression, or null when the app has none of this id. */
  deleteForApp(appId: string, id: string): Promise<SuppressionDoc | null> {
    return this.col.findOneAndDelete({ _id: id, appId });
  }
}
