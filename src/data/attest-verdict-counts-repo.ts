import type { Collection, Db } from 'mongodb';
import { ensureIndexes } from './db';

/**
 * Verdicts of an app's real attestation engines counted per UTC day, engine, verdict and first reason (`none` when
 * trusted): what the attestation dashboard reads. Each instance adds what it counted every second or so
 * (src/attest/state/verdict-tally.ts), upserts whose _id names their row, so the dashboard reads a few rows per day however
 * many devices attest, never the verdicts themselves (which are not stored).
 */
export interface AttestVerdictCountDoc {
  _id: string; // `${appId}|${day}|${engine}|${verdict}|${reason}`
  appId: string;
  /** The UTC day's first instant: the range the dashboard asks for is on it. */
  dayStart: Date;
  engine: string;
  verdict: string;
  reason: string;
  count: number;
}

/** Verdicts to add to a row: `at` is any instant of its UTC day. */
export interface AttestVerdictCountRow {
  appId: string;
  at: Date;
  engine: string;
  verdict: string;
  reason: string;
  count: number;
}

const DAY_MS = 86_400_000;

/** The row a verdict counts in: its app, UTC day, engine, verdict and reason (the _id, so instances add to one row). */
export const verdictCountId = (row: Pick<AttestVerdictCountRow, 'appId' | 'at' | 'engine' | 'verdict' | 'reason'>): string =>
  [row.appId, row.at.toISOString().slice(0, 10), row.engine, row.verdict, row.reason].join('|');

export class AttestVerdictCountsRepo {
  static readonly collectionName = 'attest_verdict_counts';
  private readonly col: Collection<AttestVerdictCountDoc>;
  constructor(db: Db) {
    this.col = db.collection<AttestVerdictCountDoc>(AttestVerdictCountsRepo.collectionName);
  }
  async ensureIndexes(): Promise<void> {
    await ensureIndexes(this.col, [{ key: { appId: 1, dayStart: 1 }, name: 'app_day' }]);
  }
  /** Adds counts to their rows, in one command: concurrent instances add to the same rows (upserts on the row's _id). */
  async add(rows: AttestVerdictCountRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.col.bulkWrite(
      rows.map((row) => {
        const dayStart = new Date(Math.floor(row.at.getTime() / DAY_MS) * DAY_MS);
        const _id = verdictCountId(row);
        return {
          updateOne: {
            filter: { _id },
            update: { $inc: { count: row.count }, $setOnInsert: { appId: row.appId, dayStart, engine: row.engine, verdict: row.verdict, reason: row.reason } },
            upsert: true,
          },
        };
      }),
      { ordered: false },
    );
  }
  /** The app's rows of the days that start in [from, to), oldest first, at most `limit` + 1 (the caller refuses beyond). */
  inRange(appId: string, from: Date, to: Date, limit: number): Promise<AttestVerdictCountDoc[]> {
    return this.col.find({ appId, dayStart: { $gte: from, $lt: to } }).sort({ dayStart: 1 }).limit(limit + 1).toArray();
  }
}
