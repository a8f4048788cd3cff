import { randomBytes } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
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

  async insert(docs: ThreatMergeDoc[]): Promise<void> {
    if (docs.length) await this.col.insertMany(docs, { ordered: false });
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
