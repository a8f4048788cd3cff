import { createHash, createHmac } from 'node:crypto';

/** Events merge only within this span after the first occurrence of their window (docs/contract.md, "Security events"). */
export const MERGE_WINDOW_MS = 5 * 60 * 1000;

/** What makes two events "the same" for merging: everything but occurredAt and confidence, device included. */
export interface MergeIdentity {
  appId: string;
  deviceHash: string;
  detection: string;
  verdict: string;
  action: string;
  signals: readonly string[];
  platform: string | null;
  appVersion: string | null;
  buildId: string | null;
  /** The registered build a verified attestation of the batch named (docs/attestation.md); null when not attested. */
  attestedBuildId?: string | null;
  /** Whether the batch carried a verdict token that verified (docs/attestation.md, "Threats"). */
  attested?: boolean;
}

/**
 * The device id as stored: HMAC-SHA256 under a service secret, per app. Without the secret a stored hash cannot be
 * tested against guessed device ids, and the same device is not linkable across apps.
 */
export function hashDeviceId(secret: Buffer, appId: string, unverifiedDeviceId: string): string {
  return createHmac('sha256', secret).update(`${appId}\n${unverifiedDeviceId}`).digest('hex');
}

/** Signals are a set: the same signals in another order are the same observation. */
export function normalizeSignals(signals: readonly string[]): string[] {
  return [...new Set(signals)].sort();
}

export function mergeKey(identity: MergeIdentity): string {
  const parts = [
    identity.appId,
    identity.deviceHash,
    identity.detection,
    identity.verdict,
    identity.action,
    normalizeSignals(identity.signals),
    identity.platform,
    identity.appVersion,
    identity.buildId,
    // Attested events are another observation than unattested ones; unattested keys stay as they were before
    // attestation existed, so their windows keep merging across the upgrade.
    ...(identity.attested ? [{ attested: identity.attestedBuildId ?? null }] : []),
  ];
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

/**
 * The id of the n-th window of a merge key. Derived, not random: two instances opening the same window compute the
 * same id, so the unique _id lets exactly one insert win and the other merges into it.
 */
export function threatIdFor(key: string, generation: number): string {
  return `thr_${createHash('sha256').update(`${key}\n${generation}`).digest('hex').slice(0, 32)}`;
}
