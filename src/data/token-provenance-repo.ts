import { createHash } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { ensureIndexes } from './db';
import type { BuildProvenance } from '../services/builds/provenance';

export interface TokenProvenanceDoc {
  _id: string; // sha256 of the access token: the token itself is a credential and is never stored
  appId: string;
  provenance: BuildProvenance;
  /** The access token's expiry: after it the record can serve no request. */
  expiresAt: Date;
}

/** The verified job claims behind each access token minted by the OIDC exchange, looked up when it registers a build. */
export class TokenProvenanceRepo {
  static readonly collectionName = 'access_token_provenance';
  private readonly col: Collection<TokenProvenanceDoc>;
  constructor(db: Db) {
    this.col = db.collection<TokenProvenanceDoc>(TokenProvenanceRepo.collectionName);
  }
  async ensureIndexes(): Promise<void> {
    // TTL only tidies up; `find` checks expiresAt itself.
    await ensureIndexes(this.col, [{ key: { expiresAt: 1 }, name: 'expires_ttl', expireAfterSeconds: 0 }]);
  }

  static hashToken(accessToken: string): string {
    return createHash('sha256').update(accessToken).digest('hex');
  }

  async record(accessToken: string, appId: string, provenance: BuildProvenance, expiresAt: Date): Promise<void> {
    await this.col.insertOne({ _id: TokenProvenanceRepo.hashToken(accessToken), appId, provenance, expiresAt });
  }

  async find(appId: string, tokenHash: string, now: Date): Promise<BuildProvenance | null> {
    const doc = await this.col.findOne({ _id: tokenHash, appId, expiresAt: { $gt: now } });
    return doc?.provenance ?? null;
  }
}
