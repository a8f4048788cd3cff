import { createHash } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { ensureIndexes } from './db';

/**
 * A challenge handed to a device (POST /v1/attest/challenges). The nonce itself is never stored: `_id` is its SHA-256,
 * so a copy of the database cannot answer a challenge still live.
 */
export interface AttestChallengeDoc {
  _id: string; // hex SHA-256 of the nonce
  appId: string;
  createdAt: Date;
  expiresAt: Date;
  /** Null while unused; then when it was last presented (consume). */
  usedAt: Date | null;
  /** Kept this long after expiry so a late replay is told `nonce_replayed`, not `nonce_unknown`; then the TTL removes it. */
  purgeAt: Date;
}

export type ChallengeState = 'live' | 'unknown' | 'expired' | 'replayed';

export const challengeIdOf = (nonce: string): string => createHash('sha256').update(nonce, 'utf8').digest('hex');

/** Attestation challenges: each consumed at most once, whichever instance sees it first. */
export class AttestChallengesRepo {
  static readonly collectionName = 'attest_challenges';
  private readonly col: Collection<AttestChallengeDoc>;
  constructor(db: Db) {
    this.col = db.collection<AttestChallengeDoc>(AttestChallengesRepo.collectionName);
  }
  async ensureIndexes(): Promise<void> {
    await ensureIndexes(this.col, [{ key: { purgeAt: 1 }, name: 'purge_ttl', expireAfterSeconds: 0 }]);
  }
  async insert(doc: AttestChallengeDoc): Promise<void> {
    await this.col.insertOne(doc);
  }
  /**
   * Consumes the app's challenge for `nonce`, in one command whatever the answer (a flood of unknown or replayed
   * nonces costs one write each): `live` for exactly one caller, however many race, because only the update that
   * finds `usedAt` null sees it so before it moves ($max: null sorts before any date); an expired one is consumed
   * too, and answered `expired`. `usedAt` ends as the last time the nonce was presented.
   */
  async consume(appId: string, nonce: string, now: Date): Promise<ChallengeState> {
    const before = await this.col.findOneAndUpdate({ _id: challengeIdOf(nonce), appId }, { $max: { usedAt: now } }, { returnDocument: 'before' }); // FerretDB refuses a projection on findAndModify
    if (!before) return 'unknown';
    if (before.usedAt !== null) return 'replayed';
    return before.expiresAt > now ? 'live' : 'expired';
  }
}
