import { randomBytes } from 'node:crypto';
import { MongoBulkWriteError, type Collection, type Db } from 'mongodb';
import { ensureIndexes } from './db';
import type { Detection, Occurrences } from './threats-repo';

/**
 * Occurrences merged into an existing threat by a later request: one record per threat per request, inserted, never
 * updated. A threat's count is its own plus its records' (and lastOccurredAt and confidence the highest of them).
 * Inserting instead of $inc-ing the threat keeps ingestion at insert cost on every server (FerretDB runs any update
 * as a scan of the collection). Records of a threat are bounded by the requests within its 5-minute window.
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
    const existing = new Set<string>();
    if (docs.length === 0) return existing;
    try {
      await this.col.insertMany(docs, { ordered: false });
    } catch (error) {
      if (!(error instanceof MongoBulkWriteError)) throw error;
      const writeErrors = Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors];
      if (writeErrors.length === 0) throw error;
      for (const writeError of writeErrors) {
        if (writeError.code !== 11000) throw error;
        existing.add(docs[writeError.index]._id);
      }
    }
    return existing;
  }

  /** The merged occurrences of these threats of the app, summed per threat. */
  async sums(appId: string, threatIds: string[]): Promise<Map<string, Occurrences>> {
    const sums = new Map<string, Occurrences>();
    if (threatIds.length === 0) return sums;
    const docs = await this.col.find({ appId, threatId: { $in: threatIds } }, { projection: { threatId: 1, count: 1, last: 1, confidence: 1 } }).toArray();
    for (const d of docs) {
      const prior = sums.get(d.threatId);
      sums.set(d.threatId, {
        count: (prior?.count ?? 0) + d.count,
        last: prior && prior.last > d.last ? prior.last : d.last,
        confidence: Math.max(prior?.confidence ?? 0, d.confidence),
      });
    }
    return sums;
  }

  /** Records of threats first seen in [from, to), at most `cap` + 1 of them. */
  statsRows(appId: string, from: Date, to: Date, cap: number): AsyncIterable<Pick<ThreatMergeDoc, 'threatOccurredAt' | 'detection' | 'count'>> {
    return this.col
      .find({ appId, threatOccurredAt: { $gte: from, $lt: to } }, { projection: { _id: 0, threatOccurredAt: 1, detection: 1, count: 1 } })
      .limit(cap + 1) as unknown as AsyncIterable<Pick<ThreatMergeDoc, 'threatOccurredAt' | 'detection' | 'count'>>;
  }
}
