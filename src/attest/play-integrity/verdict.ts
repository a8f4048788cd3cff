import type { AttestReason } from '../reasons';
import { readVerdict } from './payload-shape';

/**
 * The checks on a decoded integrity verdict, the same whether a classic token was opened here (token.ts) or Google's
 * server decoded a standard one (standard.ts). Google: "You must first check that the values in the requestDetails
 * field match those of the original request before checking each integrity verdict."
 * Source: https://developer.android.com/google/play/integrity/verdicts. The reasons are src/attest/reasons.ts.
 */

/** Google's device labels that can be a minimum, weakest first (MEETS_VIRTUAL_INTEGRITY, for emulators, never is). */
export const DEVICE_INTEGRITY_LEVELS = ['MEETS_BASIC_INTEGRITY', 'MEETS_DEVICE_INTEGRITY', 'MEETS_STRONG_INTEGRITY'] as const;
export type DeviceIntegrityLevel = (typeof DEVICE_INTEGRITY_LEVELS)[number];

export interface IntegrityExpectations {
  /** The app's configured package: both requestDetails.requestPackageName and appIntegrity.packageName must be it. */
  packageName: string;
  /** The request's nonce, which a classic token echoes in requestDetails.nonce. */
  nonce: string;
  /** The package's recorded signing certificates, lowercase hex SHA-256; null or empty when none is recorded. */
  recordedSigners: readonly string[] | null;
  minDeviceIntegrity: DeviceIntegrityLevel;
  now: Date;
}

/**
 * How far requestDetails.timestampMillis may be from now, either way: 5 minutes, the life of a challenge
 * (`POST /v1/attest/challenges`). Earlier is a replayed or stockpiled verdict; later is a clock not to be trusted.
 */
export const TIMESTAMP_TOLERANCE_MS = 5 * 60_000;

/**
 * A nonce as Google takes it for classic requests: "Base64-encoded, URL-safe, no-wrap"
 * (https://developer.android.com/google/play/integrity/classic). Compared as text, never as decoded bytes: Node's
 * decoder skips characters it does not know, so `nonce + "$"` would decode to the same bytes. Only trailing `=`
 * padding is set aside, the one spelling difference that does not change which base64url value is meant.
 */
const NONCE_TEXT = /^[A-Za-z0-9_-]+={0,2}$/;

/**
 * Every check on the verdict; `reasons` lists each that failed, once, in the order checked (empty: trusted). A payload
 * that is not Google's documented shape gives `token_malformed` alone. `versionCode` is appIntegrity.versionCode
 * when the verdict carries one and the device meets the minimum integrity, so the caller can look up the build. Standard requests pass the
 * `requestHash` they computed; it is then compared instead of the nonce. Never throws.
 */
export function checkIntegrityPayload(payload: unknown, expect: IntegrityExpectations & { requestHash?: string }): { reasons: AttestReason[]; versionCode?: number } {
  const facts = readVerdict(payload);
  if (!facts) return { reasons: ['token_malformed'] };
  const reasons = new Set<AttestReason>();

  if (facts.requestPackageName !== expect.packageName) reasons.add('package_mismatch');
  const attested = expect.requestHash !== undefined ? facts.requestHash === expect.requestHash : sameNonce(facts.nonce, expect.nonce);
  if (!attested) reasons.add('challenge_mismatch');
  const now = expect.now instanceof Date ? expect.now.getTime() : NaN;
  if (!(Math.abs(now - facts.timestampMillis) <= TIMESTAMP_TOLERANCE_MS)) reasons.add('timestamp_stale');

  if (facts.appRecognitionVerdict !== 'PLAY_RECOGNIZED') reasons.add('app_unrecognized');
  if (facts.app) {
    if (facts.app.packageName !== expect.packageName) reasons.add('package_mismatch');
    const recorded = Array.isArray(expect.recordedSigners) ? expect.recordedSigners.map((s) => String(s).toLowerCase()) : [];
    if (recorded.length === 0) reasons.add('signer_unrecorded');
    else if (!facts.app.signerDigestsHex.some((d) => recorded.includes(d))) reasons.add('signer_mismatch');
  }

  const deviceVouched = meetsLevel(facts.deviceLabels, expect.minDeviceIntegrity);
  if (!deviceVouched) reasons.add('device_integrity_low');
  if (facts.isTestingResponse) reasons.add('test_response');

  // What appIntegrity says about the app is gathered on the device: below the app's minimum integrity it names no
  // build (the verdict may still be suspicious, as the contract has it, but never "this device runs build X").
  return facts.app && deviceVouched ? { reasons: [...reasons], versionCode: facts.app.versionCode } : { reasons: [...reasons] };
}

function sameNonce(attested: string | undefined, requested: unknown): boolean {
  if (typeof attested !== 'string' || typeof requested !== 'string') return false;
  if (!NONCE_TEXT.test(attested) || !NONCE_TEXT.test(requested)) return false;
  return attested.replace(/=+$/, '') === requested.replace(/=+$/, '');
}

/** Some label at or above the minimum (BASIC < DEVICE < STRONG); no labels is below basic. */
function meetsLevel(labels: readonly string[], min: DeviceIntegrityLevel): boolean {
  const at = DEVICE_INTEGRITY_LEVELS.indexOf(min);
  // A minimum that is not one of the three (a stored value from elsewhere) asks for the strongest, never the weakest.
  const enough = DEVICE_INTEGRITY_LEVELS.slice(at < 0 ? DEVICE_INTEGRITY_LEVELS.length - 1 : at) as readonly string[];
  return labels.some((label) => enough.includes(label));
}
