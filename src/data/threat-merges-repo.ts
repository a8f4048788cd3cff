import { randomBytes } from 'node:crypto';
import type { Collection, Db, Filter } from 'mongodb';
import { ensureIndexes, insertManyIfAbsent } from './db';
import type { Detection, Occurrences, ThreatDoc } from './threats-repo';

/**
 * Occurrences merged into an existing threat by a later request: one record per threat per request, inserted, never
 * updated. A threat's count is its own plus its records' (and lastOccurredAt and confidence the highest of them).
 * Inserting instead of $inc-ing the threat keeps ingestion at insert cost on every server (FerretDB runs any update
 * as a scan of the collection). Records are not bounded per threat (events up to 30 days old still merge into their
 * window, and each event with an id has a record of its own), so they are only ever streamed, never read whole; the
 * retention sweep folds them into their threat and deletes them some 35 minutes after they were created.
 */
export interface ThreatMergeDoc {
  _id: string;
  appId: string;
  threatId: string;
  count: number;
  last: Date;
  confidence: number;
  // Copied from the threat, so daily statistics need not look the threat up.
  threatOccurredAt: Date;
  detection: Detection;
  deviceHash: string;
  createdAt: Date;
}

export type MergeStatsRow = Pick<ThreatMergeDoc, 'threatId' | 'threatOccurredAt' | 'detection' | 'count' | 'createdAt'>;

export class ThreatMergesRepo {
  static readonly collectionName = 'threat_merges';
  private readonly col: Collection<ThreatMergeDoc>;
  constructor(db: Db) {
    this.col = db.collection<ThreatMergeDoc>(ThreatMergesRepo.collectionName);
  }
  async ensureIndexes(): Promise<void> {
    await ensureIndexes(this.col, [
      { key: { appId: 1, threatId: 1 }, name: 'app_threat' },
      { key: { appId: 1, threatOccurredAt: 1 }, name: 'app_threat_time' },
      // The retention sweep, across apps: records to fold, records of expired threats.
      { key: { createdAt: 1, _id: 1 }, name: 'created' },
      { key: { threatOccurredAt: 1 }, name: 'threat_time' },
    ]);
  }

  static newId(): string {
    return `mrg_${randomBytes(12).toString('hex')}`;
  }

  /**
   * Inserts records in one round trip; returns the ids that already existed. Only records of events with an event id
   * have derived ids (the same for every attempt to count that event), so only they can collide: the event was
   * counted by an earlier or concurrent attempt.
   */
  async insert(docs: ThreatMergeDoc[]): Promise<Set<string>> {
    const taken = await insertManyIfAbsent(this.col, docs);
    return new Set([...taken].map((i) => docs[i]._id));
  }

  /**
   * The merged occurrences of these threats of the app not yet folded into them, summed per threat: records created
   * at or after the threat's `folded.upTo` (older ones may still exist, waiting to be deleted, and are already in it).
   */
  async sums(appId: string, threats: Pick<ThreatDoc, '_id' | 'folded'>[]): Promise<Map<string, Occurrences>> {
    const sums = new Map<string, Occurrences>();
    if (threats.length === 0) return sums;
    const foldedUpTo = new Map(threats.map((t) => [t._id, t.folded?.upTo.getTime() ?? 0]));
    const docs = this.col.find({ appId, threatId: { $in: [...foldedUpTo.keys()] } }, { projection: { threatId: 1, count: 1, last: 1, confidence: 1, createdAt: 1 } });
    for await (const d of docs) {
      if (d.createdAt.getTime() < (foldedUpTo.get(d.threatId) ?? 0)) continue;
      const prior = sums.get(d.threatId);
      sums.set(d.threatId, {
        count: (prior?.count ?? 0) + d.count,
        last: prior && prior.last > d.last ? prior.last : d.last,
        confidence: Math.max(prior?.confidence ?? 0, d.confidence),
      });
    }
    return sums;
  }

  /** Every record of one threat, streamed (the fold reads them all, and a threat may have very many). */
  ofThreat(appId: string, threatId: string): AsyncIterable<Pick<ThreatMergeDoc, '_id' | 'count' | 'last' | 'confidence' | 'createdAt'>> {
    return this.col.find({ appId, threatId }, { projection: { _id: 1, count: 1, last: 1, confidence: 1, createdAt: 1 } });
  }

  /** Records created before `cutoff`, in (createdAt, _id) order after `after`, at most `limit`. */
  createdBefore(cutoff: Date, limit: number, after?: { createdAt: Date; id: string }): Promise<Pick<ThreatMergeDoc, '_id' | 'threatId' | 'createdAt'>[]> {
    const filter: Filter<ThreatMergeDoc> = { createdAt: { $lt: cutoff } };
    if (after) filter.$or = [{ createdAt: { $gt: after.createdAt } }, { createdAt: after.createdAt, _id: { $gt: after.id } }];
    return this.col.find(filter, { projection: { _id: 1, threatId: 1, createdAt: 1 } }).sort({ createdAt: 1, _id: 1 }).limit(limit).toArray();
  }

  /** Ids of records of threats first seen before `cutoff`, at most `limit`. */
  async idsOfThreatsBefore(cutoff: Date, limit: number): Promise<string[]> {
    const docs = await this.col.find({ threatOccurredAt: { $lt: cutoff } }, { projection: { _id: 1 } }).limit(limit).toArray();
    return docs.map((d) => d._id);
  }

  async deleteById(id: string): Promise<void> {
    await this.col.deleteOne({ _id: id });
  }

  /** Records of threats first seen in [from, to), at most `cap` + 1 of them. */
  statsRows(appId: string, from: Date, to: Date, cap: number): AsyncIterable<MergeStatsRow> {
    return this.col
      .find({ appId, threatOccurredAt: { $gte: from, $lt: to } }, { projection: { _id: 0, threatId: 1, threatOccurredAt: 1, detection: 1, count: 1, createdAt: 1 } })
      .limit(cap + 1) as unknown as AsyncIterable<MergeStatsRow>;
  }
}
