import type { Collection, Db } from 'mongodb';
import type { JWK } from 'jose';
import type { SealedJwk } from '../crypto/key-sealing';
import { ensureIndexes } from './db';

export type SigningKeyStatus = 'active' | 'retired' | 'revoked';

export interface SigningKeyDoc {
  _id: string; // kid
  alg: 'ES256';
  privateJwk?: JWK; // stored in the clear when no KEY_ENCRYPTION_KEY is set
  sealedPrivateJwk?: SealedJwk; // otherwise sealed with it
  publicJwk: JWK;
  status: SigningKeyStatus; // active: signs; retired: still verifies; revoked: verifies nothing
  createdAt: Date;
  revokedAt: Date | null;
}

export class SigningKeysRepo {
  static readonly collectionName = 'signing_keys';
  /** The attestation verdict tokens' keys: another set, so rotating one never touches the other. */
  static readonly attestCollectionName = 'attest_signing_keys';
  private readonly col: Collection<SigningKeyDoc>;
  constructor(db: Db, collectionName = SigningKeysRepo.collectionName) {
    this.col = db.collection<SigningKeyDoc>(collectionName);
  }
  async ensureIndexes(): Promise<void> {
    await ensureIndexes(this.col, [{ key: { status: 1, createdAt: -1, _id: -1 }, name: 'status_created_id' }]);
  }
  async insert(doc: SigningKeyDoc): Promise<void> {
    await this.col.insertOne(doc);
  }
  /** The newest active key signs; older active keys (a rotation race) still verify. */
  findActive(): Promise<SigningKeyDoc | null> {
    return this.col.find({ status: 'active' }).sort({ createdAt: -1, _id: -1 }).limit(1).next();
  }
  /** The keys whose signatures may still verify (active and retired), public halves only. */
  findVerifying(): Promise<Array<Pick<SigningKeyDoc, '_id' | 'publicJwk'>>> {
    return this.col.find({ status: { $in: ['active', 'retired'] } }, { projection: { _id: 1, publicJwk: 1 } }).toArray();
  }
  findById(kid: string): Promise<SigningKeyDoc | null> {
    return this.col.findOne({ _id: kid });
  }
  async retireAllExcept(kid: string): Promise<void> {
    await this.col.updateMany({ _id: { $ne: kid }, status: 'active' }, { $set: { status: 'retired' } });
  }
  async revokeAllExcept(kid: string, at: Date): Promise<number> {
    const result = await this.col.updateMany({ _id: { $ne: kid }, status: { $ne: 'revoked' } }, { $set: { status: 'revoked', revokedAt: at } });
    return result.modifiedCount;
  }
}
