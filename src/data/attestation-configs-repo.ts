import type { Collection, Db } from 'mongodb';
import type { StoredSecret } from '../crypto/secret-box';

export type DeviceIntegrityLevel = 'MEETS_BASIC_INTEGRITY' | 'MEETS_DEVICE_INTEGRITY' | 'MEETS_STRONG_INTEGRITY';
export type AppAttestEnvironment = 'production' | 'development';

/**
 * An app's device attestation configuration (docs/attestation.md): which engines verify its devices' tokens, and
 * what they check them against. An app without one keeps the spec's stub engine.
 */
export interface AttestationConfigDoc {
  _id: string; // the app id: one configuration per app
  android: {
    packageName: string;
    /** Play Console's keys: the AES-256 decryption key sealed (secret-box, bound to the app id), the verification key (public, base64 DER SPKI). */
    playIntegrity: { decryptionKey: StoredSecret; verificationKey: string } | null;
    keyAttestation: boolean;
    minDeviceIntegrity: DeviceIntegrityLevel;
    /**
     * Lowercase hex SHA-256 of the certificates devices install the app with, when the operator gave them (Play App
     * Signing: Google signs what devices install, not the upload key the scans record); absent or null: the signers
     * registry's recorded signer.
     */
    appSigningCertificates?: string[] | null;
  } | null;
  ios: { teamId: string; bundleId: string; environment: AppAttestEnvironment } | null;
  updatedAt: Date;
}

/** Attestation configurations, one per app, read by _id only. */
export class AttestationConfigsRepo {
  static readonly collectionName = 'attestation_configs';
  private readonly col: Collection<AttestationConfigDoc>;
  constructor(db: Db) {
    this.col = db.collection<AttestationConfigDoc>(AttestationConfigsRepo.collectionName);
  }
  async ensureIndexes(): Promise<void> {
    // Read and written by _id (the app id) only.
  }
  find(appId: string): Promise<AttestationConfigDoc | null> {
    return this.col.findOne({ _id: appId });
  }
  /** Replaces the app's configuration whole: a PUT says everything the app attests with. */
  async replace(doc: AttestationConfigDoc): Promise<void> {
    await this.col.replaceOne({ _id: doc._id }, doc, { upsert: true });
  }
}
