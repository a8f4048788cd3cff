import type { Collection, Db } from 'mongodb';
import { ensureIndexes } from './db';
import { EVENT_ID_TTL_MS, expiredBy, type ThreatEventClaimDoc } from './threat-event-claims-repo';

/** How long an instance trusts its answer to "does the previous release's collection hold a live claim?". */
const LIVE_CHECK_MS = 60_000;

/**
 * Event-id claims as the previous release stored them (`_id` `${appId}:${eventId}`, see legacyClaimIdFor). Nothing
 * writes here any more, but a claim made before an upgrade still holds for 24 hours, so while any live one remains
 * each ingest also looks its ids up here (exactly-once across the deploy). The retention sweep removes expired ones;
 * once none is live the lookup stops, and the collection empties within a day.
 */
export class ThreatEventIdsRepo {
  static readonly collectionName = 'threat_event_ids';
  private readonly col: Collection<ThreatEventClaimDoc>;
  private live: { answer: boolean; until: number } | undefined;
  constructor(db: Db) {
    this.col = db.collection<ThreatEventClaimDoc>(ThreatEventIdsRepo.collectionName);
  }
  async ensureIndexes(): Promise<void> {
    await ensureIndexes(this.col, [{ key: { claimedAt: 1 }, name: 'claimed_ttl', expireAfterSeconds: EVENT_ID_TTL_MS / 1000 }]);
  }

  /**
   * Whether any claim here is still live at `now`, asked at most once a minute per instance (one read of the
   * claimedAt index). Asked again even after "no": an instance of the previous release may still be writing during a
   * rolling deploy.
   */
  async holdsLive(now: Date): Promise<boolean> {
    if (this.live && now.getTime() < this.live.until) return this.live.answer;
    const found = await this.col.findOne({ claimedAt: { $gt: expiredBy(now) } }, { projection: { _id: 1 } });
    this.live = { answer: found !== null, until: now.getTime() + LIVE_CHECK_MS };
    return this.live.answer;
  }

  /** The claims among these ids (by _id), expired ones included: the caller decides by claimedAt. */
  async findMany(ids: string[]): Promise<ThreatEventClaimDoc[]> {
    return ids.length ? this.col.find({ _id: { $in: ids } }).toArray() : [];
  }

  /** Ids of claims expired at `now`, at most `limit` (the retention sweep removes them where no TTL index does). */
  async idsExpired(now: Date, limit: number): Promise<string[]> {
    const docs = await this.col.find({ claimedAt: { $lte: expiredBy(now) } }, { projection: { _id: 1 } }).limit(limit).toArray();
    return docs.map((d) => d._id);
  }

  /** Deletes these claims where they are still expired (an instance of the previous release may have renewed one). */
  async deleteExpired(ids: string[], now: Date): Promise<void> {
    if (ids.length) await this.col.deleteMany({ _id: { $in: ids }, claimedAt: { $lte: expiredBy(now) } });
  }
}
