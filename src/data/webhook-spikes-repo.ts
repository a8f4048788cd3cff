import type { Collection, Db } from 'mongodb';
import { ensureIndexes } from './db';

export const SPIKE_BUCKET_MS = 5 * 60_000;

interface SpikeCounterDoc {
  _id: string; // <appId>:<detection>:<bucket start ms>, or <webhookId>:threat.opened:<minute start ms>
  count: number;
  expiresAt: Date;
}

/** One counter per (app, detection, 5-minute bucket), for threat.spike webhooks; and per (webhook, minute), for the cap of threat.opened. */
export class WebhookSpikesRepo {
  static readonly collectionName = 'webhook_spike_counters';
  private readonly col: Collection<SpikeCounterDoc>;
  constructor(db: Db) {
    this.col = db.collection<SpikeCounterDoc>(WebhookSpikesRepo.collectionName);
  }
  async ensureIndexes(): Promise<void> {
    // Counters are only useful during their bucket: MongoDB drops them after a day (FerretDB keeps a plain index).
    await ensureIndexes(this.col, [{ key: { expiresAt: 1 }, name: 'expires', expireAfterSeconds: 0 }]);
  }

  /** Adds `n` to the bucket's counter; returns the count after the increment (increments are atomic). */
  add(appId: string, detection: string, bucketStart: Date, n: number): Promise<number> {
    return this.increment(`${appId}:${detection}:${bucketStart.getTime()}`, n, new Date(bucketStart.getTime() + 24 * 3600_000));
  }

  /**
   * Adds `n` to a webhook's counter of threat.opened deliveries queued in the minute starting at `minuteStart`; returns
   * the count after the increment. Kept beside the spike counters: the same atomic counter, a different key, and gone
   * an hour later (only read during its minute).
   */
  addOpened(webhookId: string, minuteStart: Date, n: number): Promise<number> {
    return this.increment(`${webhookId}:threat.opened:${minuteStart.getTime()}`, n, new Date(minuteStart.getTime() + 3600_000));
  }

  private async increment(id: string, n: number, expiresAt: Date): Promise<number> {
    const doc = await this.col.findOneAndUpdate({ _id: id }, { $inc: { count: n }, $setOnInsert: { expiresAt } }, { upsert: true, returnDocument: 'after' });
    return doc?.count ?? n;
  }

  /** Removes up to `batch` counters past their expiry (the TTL index does it on MongoDB, this on FerretDB). */
  async deleteExpired(now: Date, batch: number): Promise<number> {
    const ids = await this.col.find({ expiresAt: { $lt: now } }, { projection: { _id: 1 } }).sort({ expiresAt: 1 }).limit(batch).toArray();
    if (ids.length === 0) return 0;
    const result = await this.col.deleteMany({ _id: { $in: ids.map((d) => d._id) }, expiresAt: { $lt: now } });
    return result.deletedCount;
  }
}
