import type { Collection, Db } from 'mongodb';
import { claimOrTakeOver, ensureIndexes } from './db';

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

export interface IdempotencyDoc {
  _id: string; // sha256(appId, operation, key): the scope of a key is (app, operation, key)
  appId: string;
  operation: string;
  bodyHash: string;
  state: 'in_progress' | 'completed';
  leaseUntil: Date; // while in_progress: a crashed holder blocks others only until then
  response: StoredResponse | null;
  createdAt: Date;
  expiresAt: Date; // 24 h after the first request
}

export type ClaimOutcome =
  | { kind: 'claimed' }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'in_progress' }
  | { kind: 'body_mismatch' };

export class IdempotencyRepo {
  static readonly collectionName = 'idempotency_keys';
  private readonly col: Collection<IdempotencyDoc>;
  constructor(db: Db) {
    this.col = db.collection<IdempotencyDoc>(IdempotencyRepo.collectionName);
  }
  async ensureIndexes(): Promise<void> {
    await ensureIndexes(this.col, [{ key: { expiresAt: 1 }, name: 'expires_ttl', expireAfterSeconds: 0 }]);
  }

  /**
   * Claims the key for one request. Every step is a single-document atomic operation, so of N concurrent requests
   * with one key exactly one gets `claimed`: the unique _id decides the first claim, and conditional updates decide
   * the take-over of an expired record or of an abandoned lease.
   */
  async claim(fresh: IdempotencyDoc, now: Date): Promise<ClaimOutcome> {
    // An expired record counts as absent: it is replaced, but only if it is still the expired one.
    if (await claimOrTakeOver(this.col, fresh, { expiresAt: { $lte: now } })) return { kind: 'claimed' };

    const existing = await this.col.findOne({ _id: fresh._id });
    if (!existing) return this.claim(fresh, now); // deleted meanwhile (a 5xx released it): try again
    if (existing.bodyHash !== fresh.bodyHash) return { kind: 'body_mismatch' };
    if (existing.state === 'completed' && existing.response) return { kind: 'replay', response: existing.response };

    // In progress: take over only an abandoned lease, atomically, so two retries cannot both win.
    const takenOver = await this.col.findOneAndUpdate(
      { _id: fresh._id, state: 'in_progress', leaseUntil: { $lte: now } },
      { $set: { leaseUntil: fresh.leaseUntil } },
    );
    return takenOver ? { kind: 'claimed' } : { kind: 'in_progress' };
  }

  async complete(id: string, response: StoredResponse): Promise<void> {
    await this.col.updateOne({ _id: id }, { $set: { state: 'completed', response } });
  }

  /** Forgets a claim whose request must run again on retry (a 5xx, or a response not worth storing). */
  async release(id: string): Promise<void> {
    await this.col.deleteOne({ _id: id, state: 'in_progress' });
  }
}
