import type { Collection, Db } from 'mongodb';
import { claimOrTakeOver, ensureIndexes } from './db';

export interface UploadLockDoc {
  _id: string; // the build id: one upload of an artifact at a time, across every instance
  holder: string; // random per upload attempt: only the holder renews or releases
  expiresAt: Date; // the lease: a crashed holder blocks retries only until then
}

/** Upload locks: at most one upload of a build's artifact is in flight. */
export class UploadLocksRepo {
  static readonly collectionName = 'upload_locks';
  private readonly col: Collection<UploadLockDoc>;
  constructor(db: Db) {
    this.col = db.collection<UploadLockDoc>(UploadLocksRepo.collectionName);
  }
  async ensureIndexes(): Promise<void> {
    await ensureIndexes(this.col, [{ key: { expiresAt: 1 }, name: 'expires_ttl', expireAfterSeconds: 60 }]);
  }

  /**
   * Takes the lock for `holder`. The unique _id decides between concurrent first takers; a lock whose lease ended
   * (its holder crashed) is taken over by one conditional update, so two retries cannot both win it either.
   */
  async acquire(buildId: string, holder: string, now: Date, leaseMs: number): Promise<boolean> {
    return claimOrTakeOver(this.col, { _id: buildId, holder, expiresAt: new Date(now.getTime() + leaseMs) }, { expiresAt: { $lte: now } });
  }

  /** Extends the lease; false when the lock is no longer this holder's. */
  async renew(buildId: string, holder: string, now: Date, leaseMs: number): Promise<boolean> {
    const result = await this.col.updateOne({ _id: buildId, holder }, { $set: { expiresAt: new Date(now.getTime() + leaseMs) } });
    return result.matchedCount === 1;
  }

  async release(buildId: string, holder: string): Promise<void> {
    await this.col.deleteOne({ _id: buildId, holder });
  }
}
