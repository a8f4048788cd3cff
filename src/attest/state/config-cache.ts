import type { Repositories } from '../../data/repositories';
import type { AttestationConfigDoc } from '../../data/attestation-configs-repo';
import { openSecret } from '../../crypto/secret-box';
import { parsePlayIntegrityKeys, type PlayIntegrityKeys } from '../play-integrity';
import { sealedKeyRecordId } from '../sealed-key';
import { RecentReads } from './recent-reads';

/**
 * How long this instance remembers an app's attestation configuration: every verification needs it, and it changes
 * when an operator says so. A PUT on this instance forgets the app at once; on another, it is seen within CACHE_MS.
 */
const CACHE_MS = 5_000;
/** Apps remembered at most: a process serving many apps reads again now and then instead of growing without bound. */
const MAX_APPS = 10_000;

/** An app's configuration as verification uses it: the Play Integrity keys opened and parsed once, not per request. */
export interface AttestAppConfig {
  doc: AttestationConfigDoc;
  /** Null when the app has no Play Integrity keys. */
  playIntegrityKeys: PlayIntegrityKeys | null;
}

/** The attestation configuration of each app, remembered for a few seconds by this instance (Deps.instance.attestConfigs). */
export class AttestConfigCache {
  private readonly apps = new RecentReads<AttestAppConfig | null>(CACHE_MS, MAX_APPS);

  /**
   * The app's configuration, or null when it has none (the stub answers): remembered either way, so an app on the
   * stub costs no read per verification either. Throws when the sealed key does not open with `kek`, as reading it
   * per request did: a misconfigured instance fails loudly rather than calling every token bad.
   */
  of(repos: Repositories, appId: string, kek: Buffer | null): Promise<AttestAppConfig | null> {
    return this.apps.get(appId, async () => {
      const doc = await repos.attestationConfigs.find(appId);
      return doc ? { doc, playIntegrityKeys: openPlayIntegrityKeys(doc, kek) } : null;
    });
  }

  /** After the app's configuration is replaced on this instance. */
  forget(appId: string): void {
    this.apps.forget(appId);
  }
}

function openPlayIntegrityKeys(doc: AttestationConfigDoc, kek: Buffer | null): PlayIntegrityKeys | null {
  const stored = doc.android?.playIntegrity;
  if (!stored) return null;
  const decryptionKey = openSecret(stored.decryptionKey, kek, sealedKeyRecordId(doc._id));
  // Checked when it was configured: a stored key that no longer parses is the database's fault, not the device's.
  const { keys } = parsePlayIntegrityKeys({ decryptionKey, verificationKey: stored.verificationKey });
  if (!keys) throw new Error(`the stored Play Integrity keys of ${doc._id} do not parse`);
  return keys;
}
