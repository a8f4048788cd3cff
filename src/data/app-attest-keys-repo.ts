import type { Collection, Db } from 'mongodb';
import { insertIfAbsent } from './db';
import type { AppAttestEnvironment } from './attestation-configs-repo';

/** A device key an App Attest attestation registered for an app, with the last assertion counter accepted. */
export interface AppAttestKeyDoc {
  _id: string; // `${appId}:${keyId}`: a key belongs to one app
  appId: string;
  /** Standard base64 of the key's SHA-256, as DCAppAttestService gives it. */
  keyId: string;
  /** The key's SubjectPublicKeyInfo, DER as base64. */
  publicKeySpki: string;
  environment: AppAttestEnvironment;
  /** The highest assertion counter accepted: 0 at attestation. */
  counter: number;
  attestedAt: Date;
  lastAssertedAt: Date | null;
}

const idOf = (appId: string, keyId: string) => `${appId}:${keyId}`;

/** App Attest keys, read and written by _id. */
export class AppAttestKeysRepo {
  static readonly collectionName = 'app_attest_keys';
  private readonly col: Collection<AppAttestKeyDoc>;
  constructor(db: Db) {
    this.col = db.collection<AppAttestKeyDoc>(AppAttestKeysRepo.collectionName);
  }
  async ensureIndexes(): Promise<void> {
    // Read and written by _id only.
  }
  /** Registers a key; a key attested again keeps its record and counter (false). */
  register(doc: Omit<AppAttestKeyDoc, '_id'>): Promise<boolean> {
    return insertIfAbsent(this.col, { _id: idOf(doc.appId, doc.keyId), ...doc });
  }
  find(appId: string, keyId: string): Promise<AppAttestKeyDoc | null> {
    return this.col.findOne({ _id: idOf(appId, keyId) });
  }
  /**
   * Moves the stored counter to `counter` if it is lower: a compare-and-swap, so two instances presenting the same
   * counter at once cannot both succeed (the second finds it no longer lower). True when this call moved it.
   */
  async advanceCounter(appId: string, keyId: string, counter: number, now: Date): Promise<boolean> {
    const result = await this.col.updateOne({ _id: idOf(appId, keyId), counter: { $lt: counter } }, { $set: { counter, lastAssertedAt: now } });
    return result.modifiedCount === 1;
  }
}
