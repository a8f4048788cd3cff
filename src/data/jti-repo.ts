import { createHash } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { claimOrTakeOver, ensureIndexes } from './db';

export interface JtiDoc {
  _id: string; // sha256 of issuer and jti: bounded length whatever the token says
  usedAt: Date;
  /** exp + clock tolerance: until then the token could still verify, so the record must outlive it. */
  expiresAt: Date;
}

/** Identifiers (`jti`) of exchanged OIDC tokens, shared by every instance: each token is exchanged once. */
export class JtiRepo {
  static readonly collectionName = 'oidc_used_jtis';
  private readonly col: Collection<JtiDoc>;
  constructor(db: Db) {
    this.col = db.collection<JtiDoc>(JtiRepo.collectionName);
  }
  async ensureIndexes(): Promise<void> {
    // TTL only tidies up; `claim` checks expiresAt itself (and the fallback plain index serves that query).
    await ensureIndexes(this.col, [{ key: { expiresAt: 1 }, name: 'expires_ttl', expireAfterSeconds: 0 }]);
  }

  static idFor(issuer: string, jti: string): string {
    return createHash('sha256').update(issuer).update('\0').update(jti).digest('hex');
  }

  /**
   * Claims a jti; true for exactly one caller. The unique _id decides between concurrent claims on every instance.
   * A record whose expiresAt has passed counts as absent and is taken over, again atomically (conditional replace).
   */
  async claim(issuer: string, jti: string, now: Date, expiresAt: Date): Promise<boolean> {
    const doc: JtiDoc = { _id: JtiRepo.idFor(issuer, jti), usedAt: now, expiresAt };
    return claimOrTakeOver(this.col, doc, { expiresAt: { $lte: now } });
  }
}
