import type { Collection, Db, Filter } from 'mongodb';
import { ensureIndexes, insertManyIfAbsent, isDuplicateKeyError } from './db';

export const DETECTIONS = [
  'root_jailbreak',
  'emulator',
  'debugger',
  'hooking',
  'tamper',
  'overlay',
  'accessibility_abuse',
  'screen_capture',
  'remote_access',
] as const;
export const THREAT_VERDICTS = ['clean', 'suspicious', 'compromised'] as const;
export const THREAT_ACTIONS = ['monitor', 'warn', 'block', 'end_session'] as const;

export type Detection = (typeof DETECTIONS)[number];
export type ThreatVerdict = (typeof THREAT_VERDICTS)[number];
export type ThreatAction = (typeof THREAT_ACTIONS)[number];

/**
 * One merged security event: the occurrences of one merge key (app, device, and everything of the event but time and
 * confidence) within 5 minutes of the first. Never updated after the insert: `occurredAt` is the sort key, so pages
 * stay stable, and occurrences merged by later requests are inserted beside it (ThreatMergesRepo).
 */
export interface ThreatDoc {
  _id: string; // thr_<hex>, derived from (mergeKey, generation)
  appId: string;
  mergeKey: string;
  generation: number; // n-th window of this merge key; generations 0..n all exist once n does
  deviceHash: string; // keyed hash of the device id; the id itself is never stored
  detection: Detection;
  verdict: ThreatVerdict;
  confidence: number; // the highest of the occurrences inserted with it (later ones: threat_merges)
  action: ThreatAction;
  signals: string[];
  platform: 'android' | 'ios' | null;
  appVersion: string | null;
  buildId: string | null;
  /** A verdict token of the batch verified (docs/attestation.md, "Threats"); absent on threats stored before: false. */
  attested?: boolean;
  /** The registered build that verdict named; null or absent when none. */
  attestedBuildId?: string | null;
  occurredAt: Date; // first occurrence: the sort key
  lastOccurredAt: Date;
  windowEnd: Date; // occurredAt + 5 min: later occurrences open the next window
  count: number; // occurrences inserted with the window; later requests add theirs in threat_merges
  receivedAt: Date;
  /** First windows only: tags of the events with an event id counted in `count` (window-doc.ts, firstWindowDoc). */
  claimTags?: string[];
  /** Merge records created before `upTo`, summed by the retention sweep (jobs/threat-retention.ts); absent: none. */
  folded?: FoldedOccurrences;
}

/**
 * Field order matters: the sweep writes this with $max, which compares embedded documents field by field, so the fold
 * with the latest `upTo` (and, for the same `upTo`, the one that saw every record) wins whichever instance writes last.
 */
export interface FoldedOccurrences {
  upTo: Date;
  count: number;
  last: Date;
  confidence: number;
  at: Date; // when it was written: records before `upTo` are deleted only once this is old enough
}

export interface ThreatQuery {
  detection?: Detection;
  verdict?: ThreatVerdict;
  platform?: 'android' | 'ios';
  appVersion?: string;
  buildId?: string;
  from?: Date; // occurredAt >= from
  to?: Date; // occurredAt < to
}

export interface ThreatPosition {
  occurredAt: Date;
  id: string;
}

export interface Occurrences {
  count: number;
  last: Date;
  confidence: number;
}

export type StatsRow = Pick<ThreatDoc, '_id' | 'detection' | 'occurredAt' | 'count' | 'deviceHash' | 'folded' | 'platform' | 'appVersion' | 'buildId'>;

/**
 * The threats collection. Ingestion only inserts, and reads single documents by a lone `_id` equality, the cheapest
 * read on every store (on the embedded database, a search of the `_id` index with nothing else to check). Those
 * lookups check the app on the document instead of in the filter, which is equivalent (ids derive from a merge key
 * that includes the app, and the app is compared before anything is returned).
 */
export class ThreatsRepo {
  static readonly collectionName = 'threats';
  private readonly col: Collection<ThreatDoc>;
  constructor(db: Db) {
    this.col = db.collection<ThreatDoc>(ThreatsRepo.collectionName);
  }
  async ensureIndexes(): Promise<void> {
    await ensureIndexes(this.col, [
      { key: { appId: 1, occurredAt: -1, _id: -1 }, name: 'app_time' },
      { key: { appId: 1, detection: 1, occurredAt: -1, _id: -1 }, name: 'app_detection_time' },
      // The retention sweep, across apps.
      { key: { occurredAt: 1 }, name: 'time' },
    ]);
  }

  /** Inserts new windows in one round trip; returns the positions of those whose id already existed. */
  async insertWindows(docs: ThreatDoc[]): Promise<Set<number>> {
    return insertManyIfAbsent(this.col, docs);
  }

  /** Inserts one window; false when its id is taken (another ingest opened the same window first). */
  async insertWindow(doc: ThreatDoc): Promise<boolean> {
    try {
      await this.col.insertOne(doc);
      return true;
    } catch (error) {
      if (isDuplicateKeyError(error)) return false;
      throw error;
    }
  }

  async findWindow(appId: string, id: string): Promise<ThreatDoc | null> {
    const doc = await this.col.findOne({ _id: id });
    return doc && doc.appId === appId ? doc : null;
  }

  /** Newest first by (occurredAt, _id), keyset-paginated: no skip, stable while windows are added or merged. */
  async list(appId: string, query: ThreatQuery, limit: number, after?: ThreatPosition): Promise<{ data: ThreatDoc[]; hasMore: boolean }> {
    const filter = this.filter(appId, query);
    if (after) {
      filter.$or = [{ occurredAt: { $lt: after.occurredAt } }, { occurredAt: after.occurredAt, _id: { $lt: after.id } }];
    }
    const docs = await this.col.find(filter).sort({ occurredAt: -1, _id: -1 }).limit(limit + 1).toArray();
    return { data: docs.slice(0, limit), hasMore: docs.length > limit };
  }

  /** The fields the daily statistics need, of windows first seen in [from, to), at most `cap` + 1 of them. */
  statsRows(appId: string, from: Date, to: Date, cap: number): AsyncIterable<StatsRow> {
    return this.col
      .find(
        { appId, occurredAt: { $gte: from, $lt: to } },
        // platform, appVersion, buildId: the dashboards' narrowing and breakdowns (services/dashboards-service.ts).
        { projection: { _id: 1, detection: 1, occurredAt: 1, count: 1, deviceHash: 1, folded: 1, platform: 1, appVersion: 1, buildId: 1 } },
      )
      .limit(cap + 1) as unknown as AsyncIterable<StatsRow>;
  }

  /** A threat by id, of any app (the retention sweep). */
  findById(id: string): Promise<ThreatDoc | null> {
    return this.col.findOne({ _id: id });
  }

  /**
   * Ids of threats first seen before `cutoff`, at most `limit`. Unsorted: MongoDB walks the time index anyway, and
   * FerretDB, which sorts in memory, can then stop at the limit instead of reading every expired threat first.
   */
  async idsBefore(cutoff: Date, limit: number): Promise<string[]> {
    const docs = await this.col.find({ occurredAt: { $lt: cutoff } }, { projection: { _id: 1 } }).limit(limit).toArray();
    return docs.map((d) => d._id);
  }

  /** By _id alone: the one filter FerretDB serves from an index, so a sweep never holds its serializer long. */
  async deleteById(id: string): Promise<void> {
    await this.col.deleteOne({ _id: id });
  }

  /** Records a fold; $max keeps the latest of concurrent folds (see FoldedOccurrences). */
  async fold(id: string, folded: FoldedOccurrences): Promise<void> {
    await this.col.updateOne({ _id: id }, { $max: { folded } });
  }

  private filter(appId: string, query: ThreatQuery): Filter<ThreatDoc> {
    const filter: Filter<ThreatDoc> = { appId };
    if (query.detection) filter.detection = query.detection;
    if (query.verdict) filter.verdict = query.verdict;
    if (query.platform) filter.platform = query.platform;
    if (query.appVersion) filter.appVersion = query.appVersion;
    if (query.buildId) filter.buildId = query.buildId;
    if (query.from || query.to) {
      filter.occurredAt = { ...(query.from ? { $gte: query.from } : {}), ...(query.to ? { $lt: query.to } : {}) };
    }
    return filter;
  }
}
