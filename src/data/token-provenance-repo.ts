import type { Collection, Db } from 'mongodb';
import { ensureIndexes } from './db';
import type { BuildProvenance } from '../oidc/providers/model';

export interface TokenProvenanceDoc {
  _id: string; // the access token's jti (never the token, a credential, nor a hash of its text: see mintAccessToken)
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

  async record(tokenId: string, appId: string, provenance: BuildProvenance, expiresAt: Date): Promise<void> {
    await this.col.insertOne({ _id: tokenId, appId, provenance, expiresAt });
  }

  async find(appId: string, tokenId: string, now: Date): Promise<BuildProvenance | null> {
    const doc = await this.col.findOne({ _id: tokenId, appId, expiresAt: { $gt: now } });
    return doc?.provenance ?? null;
  }
}
