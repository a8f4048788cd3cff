import type { Collection, Db } from 'mongodb';
import { ensureIndexes } from './db';

export interface ApiKeyDoc {
  _id: string; // the <id> part of svc_live_<id>_<secret>
  appId: string;
  name: string | null;
  scopes: string[];
  mode: 'live' | 'test';
  secretHash: string; // sha256 hex of the secret; the secret itself is never stored
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

export class ApiKeysRepo {
  static readonly collectionName = 'api_keys';
  private readonly col: Collection<ApiKeyDoc>;
  constructor(db: Db) {
    this.col = db.collection<ApiKeyDoc>(ApiKeysRepo.collectionName);
  }
  async ensureIndexes(): Promise<void> {
    await ensureIndexes(this.col, [{ key: { appId: 1, createdAt: -1 }, name: 'app_created' }]);
  }
  async insert(doc: ApiKeyDoc): Promise<void> {
    await this.col.insertOne(doc);
  }
  /** Looked up by key id alone: the id comes from the credential, before the app is known. */
  findById(id: string): Promise<ApiKeyDoc | null> {
    return this.col.findOne({ _id: id });
  }
  listForApp(appId: string): Promise<ApiKeyDoc[]> {
    return this.col.find({ appId }).sort({ createdAt: -1 }).toArray();
  }
  /** Returns false when the key does not exist or was already revoked. */
  async revoke(id: string, at: Date): Promise<boolean> {
    const result = await this.col.updateOne({ _id: id, revokedAt: null }, { $set: { revokedAt: at } });
    return result.modifiedCount === 1;
  }
}
