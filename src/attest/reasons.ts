/**
 * The reasons a real attestation engine gives (POST /v1/attest/verify). Each names one check that failed, in
 * words an app's backend can act on. The stub engine (attest-stub.ts) keeps the spec's own, older vocabulary.
 */
export const ATTEST_REASONS = [
  // The request's nonce is not a live challenge of the app.
  'nonce_unknown',
  'nonce_expired',
  'nonce_replayed',
  // The token attests another challenge.
  'challenge_mismatch',
  // The token cannot be read: bad base64url, CBOR or DER that is not strict, shapes that are not the platform's.
  'token_malformed',
  // Play Integrity: the JWE does not open with the app's decryption key.
  'decrypt_failed',
  'signature_invalid',
  'chain_untrusted',
  'certificate_revoked',
  'certificate_expired',
  'package_mismatch',
  'signer_mismatch',
  // No signer is recorded for the package yet (no verified release scan, no operator record): nothing to compare with.
  'signer_unrecorded',
  'app_unrecognized',
  'version_unregistered',
  'device_integrity_low',
  'device_unlocked',
  'boot_unverified',
  'software_keystore',
  'environment_mismatch',
  'team_mismatch',
  'key_unknown',
  'counter_replayed',
  'timestamp_stale',
  // Play Integrity: a Play Console test response (`testingDetails.isTestingResponse`), never a real device's.
  'test_response',
  // The app configured attestation, but not for this platform or this kind of token.
  'engine_unconfigured',
] as const;

export type AttestReason = (typeof ATTEST_REASONS)[number];

/** Reasons that leave the device usable but worth a look: the app and key are genuine, the device or build less so. */
const SUSPICIOUS: ReadonlySet<AttestReason> = new Set(['version_unregistered', 'device_integrity_low', 'device_unlocked', 'boot_unverified']);

export type AttestVerdict = 'trusted' | 'suspicious' | 'untrusted';

/** `trusted` when no reason fired, `suspicious` when only the reasons above did, `untrusted` otherwise. */
export function verdictOf(reasons: readonly AttestReason[]): AttestVerdict {
  if (reasons.length === 0) return 'trusted';
  return reasons.every((r) => SUSPICIOUS.has(r)) ? 'suspicious' : 'untrusted';
}
