import type { Collection, Db, Filter } from 'mongodb';
import { ensureIndexes } from './db';

export interface ApiKeyDoc {
  _id: string; // the <id> part of svc_live_<id>_<secret>
  appId: string;
  name: string | null;
  scopes: string[];
  mode: 'live' | 'test';
  secretHash: string; // sha256 hex of the secret; the secret itself is never stored
  /** Builds registered with the key are release builds (docs/contract.md, "Release builds"); absent: false. */
  releaseBuilds?: boolean;
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
    await ensureIndexes(this.col, [
      { key: { appId: 1, createdAt: -1 }, name: 'app_created' },
      // App.keys: keyset pages on (createdAt, _id).
      { key: { appId: 1, createdAt: -1, _id: -1 }, name: 'app_created_id' },
    ]);
  }
  async insert(doc: ApiKeyDoc): Promise<void> {
    await this.col.insertOne(doc);
  }
  /** Looked up by key id alone: the id comes from the credential, before the app is known. */
  findById(id: string): Promise<ApiKeyDoc | null> {
    return this.col.findOne({ _id: id });
  }
  /** A key of this app (by _id; the app filter makes another app's key null). */
  findForApp(appId: string, id: string): Promise<ApiKeyDoc | null> {
    return this.col.findOne({ _id: id, appId });
  }
  listForApp(appId: string): Promise<ApiKeyDoc[]> {
    return this.col.find({ appId }).sort({ createdAt: -1 }).toArray();
  }
  /** Newest first by (createdAt, _id), keyset-paginated, limit + 1 read; `includeRevoked: false` leaves revoked keys out. */
  page(appId: string, includeRevoked: boolean, limit: number, after?: { at: Date; id: string }): Promise<ApiKeyDoc[]> {
    const filter: Filter<ApiKeyDoc> = { appId };
    if (!includeRevoked) filter.revokedAt = null;
    if (after) filter.$or = [{ createdAt: { $lt: after.at } }, { createdAt: after.at, _id: { $lt: after.id } }];
    return this.col.find(filter).sort({ createdAt: -1, _id: -1 }).limit(limit + 1).toArray();
  }
  count(appId: string, includeRevoked: boolean): Promise<number> {
    const filter: Filter<ApiKeyDoc> = { appId };
    if (!includeRevoked) filter.revokedAt = null;
    return this.col.countDocuments(filter);
  }
  /** Returns false when the key does not exist or was already revoked. */
  async revoke(id: string, at: Date): Promise<boolean> {
    const result = await this.col.updateOne({ _id: id, revokedAt: null }, { $set: { revokedAt: at } });
    return result.modifiedCount === 1;
  }
}
