import type { Collection, Db, Filter } from 'mongodb';
import { ensureIndexes, insertIfAbsent, isDuplicateKeyError } from './db';
import type { Platform } from '../scan';

/** At most this many identities are listed per app (one per platform and package: an app ships a few packages). */
export const MAX_SIGNERS_LISTED = 100;

/**
 * The signing identity recorded for one package of an app (docs/scan-evidence.md, "Signing continuity").
 * `identity` is what later packages are compared with: Android, the sha256 of every signer of the package
 * (lowercase hex, sorted, space-separated; one for almost every app); iOS, `team:<teamId>`, or `leaf:<sha256>` for a
 * seal without a team. `sha256` and `teamId` are what the API shows.
 */
export interface SignerDoc {
  _id: string; // `${appId}:${platform}:${package}`: one record per package, whatever races to write it
  appId: string;
  platform: Platform;
  package: string;
  identity: string;
  /** Android: the package's (first) signer; iOS: the leaf certificate of the seal that was recorded. */
  sha256: string | null;
  teamId: string | null;
  /**
   * iOS: the SHA-256 of the recorded leaf's public key (SubjectPublicKeyInfo), which later builds of the team are
   * compared with; null or absent when none is pinned (an operator's record, Android, records made before).
   */
  keySha256?: string | null;
  source: 'scan' | 'operator';
  /** The static scan that recorded (or moved) it; null for an operator's record. */
  scanId: string | null;
  /** Why an operator recorded it; null for a scan's record. */
  reason: string | null;
  /**
   * When a v3 lineage moved the record here, or a team's new key was pinned (iOS): the sha256 it moved from (the scan
   * that moved it reports the rotation or the new key).
   */
  rotatedFrom: string | null;
  recordedAt: Date;
}

export type SignerKey = Pick<SignerDoc, 'appId' | 'platform' | 'package'>;

/**
 * What signing continuity concluded about one scanned package, as its scan states it (docs/scan-evidence.md,
 * "Signing continuity"): `recorded` (a release build's signer became the first record), `unchanged`, `rotated` (a v3
 * lineage proves it), `changed` (the critical finding), `unrecorded` (no record, and a build that is not a release
 * build: nothing compared), `unverified` (no verified signer: nothing compared).
 */
export type ContinuityVerdict = 'recorded' | 'unchanged' | 'rotated' | 'changed' | 'unrecorded' | 'unverified';
export type SignerContinuity = { verdict: ContinuityVerdict; releaseBuild: boolean };
export type SignerFields = Omit<SignerDoc, '_id' | 'appId' | 'platform' | 'package'>;

const idOf = (key: SignerKey) => `${key.appId}:${key.platform}:${key.package}`;

/** Signing identities recorded per app, platform and package. Every method is scoped to one app. */
export class SignersRepo {
  static readonly collectionName = 'signers';
  private readonly col: Collection<SignerDoc>;
  constructor(db: Db) {
    this.col = db.collection<SignerDoc>(SignersRepo.collectionName);
  }
  async ensureIndexes(): Promise<void> {
    await ensureIndexes(this.col, [
      // One record per package: concurrent first scans of a package (on any instance) insert, and exactly one wins.
      { key: { appId: 1, package: 1, platform: 1 }, name: 'app_package_platform', unique: true },
    ]);
  }

  /** Records the first signer of a package; false when one is already recorded (the caller reads and compares it). */
  insertFirst(key: SignerKey, fields: SignerFields): Promise<boolean> {
    return insertIfAbsent(this.col, { _id: idOf(key), ...key, ...fields });
  }

  find(key: SignerKey): Promise<SignerDoc | null> {
    return this.col.findOne({ appId: key.appId, package: key.package, platform: key.platform });
  }

  /**
   * Moves the record to a new identity only while it still holds `expected` (compare-and-set): of two scans racing to
   * move it, one wins and the other reads the winner's record and compares again.
   */
  async moveIfUnchanged(key: SignerKey, expected: string, fields: SignerFields, expectedKey?: string): Promise<boolean> {
    const filter: Filter<SignerDoc> = { appId: key.appId, package: key.package, platform: key.platform, identity: expected };
    // A renewed key of the same identity (iOS) moves only the pinned key it read.
    if (expectedKey !== undefined) filter.keySha256 = expectedKey;
    return (await this.col.updateOne(filter, { $set: fields })).modifiedCount > 0;
  }

  /** An operator's record: replaces whatever is recorded (or records the first). Returns the record as stored. */
  async replace(key: SignerKey, fields: SignerFields): Promise<SignerDoc> {
    const filter: Filter<SignerDoc> = { appId: key.appId, package: key.package, platform: key.platform };
    // Two upserts of a missing record can both try to insert; the loser's retry finds the record and updates it.
    const upsert = () => this.col.findOneAndUpdate(filter, { $set: fields, $setOnInsert: { _id: idOf(key) } }, { upsert: true, returnDocument: 'after' });
    let doc: SignerDoc | null;
    try {
      doc = await upsert();
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      doc = await upsert();
    }
    if (!doc) throw new Error('the upserted signer record was not returned');
    return doc;
  }

  /** The app's identities by package then platform; `pkg` narrows to one package. At most MAX_SIGNERS_LISTED. */
  listForApp(appId: string, pkg: string | null): Promise<SignerDoc[]> {
    const filter: Filter<SignerDoc> = pkg === null ? { appId } : { appId, package: pkg };
    return this.col.find(filter).sort({ package: 1, platform: 1 }).limit(MAX_SIGNERS_LISTED).toArray();
  }
}
