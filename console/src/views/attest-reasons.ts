/**
 * The words of the Attestation view: what each reason of a real attestation engine means (docs/attestation.md,
 * "Reasons"), said the way support repeats it to the customer (the app's team), and what each engine vouches for.
 * test/unit/console-attest-reasons.test.ts holds this to the service's vocabulary (src/attest/reasons.ts).
 */

/** What each first reason means to the customer; `none` is a trusted verdict. */
export const ATTEST_REASONS: Record<string, string> = {
  none: 'Every check passed: your app, signed by you, on a genuine device.',
  nonce_unknown: 'The request did not carry a challenge we issued to your app: the app must ask POST /v1/attest/challenges first and send that nonce.',
  nonce_expired: 'The challenge was more than 5 minutes old when the token arrived: the app should ask for a fresh challenge and retry.',
  nonce_replayed: 'The challenge had already been used: each works once. Either the app retried with the same one, or someone replayed a captured request.',
  challenge_mismatch: 'The token vouches for another challenge than the one sent with it: the app must pass the nonce it received when it asks its platform for the token.',
  token_malformed: 'What the app sent is not a token of the platform: cut short, wrongly encoded, or another kind of token.',
  decrypt_failed: 'The Play Integrity token does not open with the decryption key configured: check the keys pasted from Play Console are this app’s.',
  signature_invalid: 'The token’s signature does not verify: it was altered or forged, or the verification key configured is not this app’s.',
  chain_untrusted: 'The device’s certificates do not lead back to Apple’s or Google’s attestation root: not a genuine device key.',
  certificate_revoked: 'Google revoked a certificate of the device’s chain: that device’s keys are known to be leaked or compromised.',
  certificate_expired: 'A certificate of the device’s chain has expired.',
  package_mismatch: 'The token was made for another Android app (package name) than the one configured.',
  team_mismatch: 'The token was made for another Apple team or bundle id than the one configured.',
  environment_mismatch: 'An App Attest key of the development environment sent to a production configuration, or the reverse.',
  signer_mismatch: 'The app on that device is signed by someone other than you: a repackaged copy (clone) of your app, not your release.',
  signer_unrecorded: 'We have no signing certificate on record for this package yet, so nothing to compare with: upload a release build for a scan, or record the signer (POST /v1/apps/{id}/signers).',
  app_unrecognized: 'Google Play does not recognise this build of your app: installed from elsewhere, or modified.',
  version_unregistered: 'Your app and its signature are genuine, but no registered, scanned build has the version the device runs: register and upload that build from CI.',
  device_integrity_low: 'The device is below the integrity level the app asks for: rooted, an emulator, or not a certified device.',
  device_unlocked: 'The device’s bootloader is unlocked.',
  boot_unverified: 'The device did not boot a verified system image.',
  software_keystore: 'The key is kept in software, not in the device’s secure hardware: it proves nothing about the device.',
  key_unknown: 'The App Attest key is not one registered for your app: the device must attest its key before it signs requests with it.',
  counter_replayed: 'This App Attest assertion was seen before (its counter did not move forward): a replayed request.',
  timestamp_stale: 'The Play Integrity verdict was more than 5 minutes old (or dated ahead): the app must ask Play for a fresh one per request.',
  test_response: 'A Play Console test response, never a real device’s: the device is set up for license testing in Play Console.',
  engine_unconfigured: 'Your app configured attestation, but not for this platform or kind of token: add it with PUT /v1/apps/{id}/attestation.',
};

/** Reasons that leave a verdict `suspicious` (the app and its key are genuine, the device or build less so); any other is `untrusted`. */
export const SUSPICIOUS_REASONS: readonly string[] = ['version_unregistered', 'device_integrity_low', 'device_unlocked', 'boot_unverified'];

/** The engines, in the order the view lists them, with what each vouches for. */
export const ENGINES: ReadonlyArray<{ id: string; name: string; platform: string; vouches: string }> = [
  { id: 'app_attest', name: 'App Attest', platform: 'iOS', vouches: 'Apple vouches that the key lives in the Secure Enclave of a genuine iPhone or iPad, for your team and bundle id.' },
  { id: 'play_integrity', name: 'Play Integrity', platform: 'Android', vouches: 'Google Play vouches for the app it installed, its signer and the device’s integrity.' },
  { id: 'key_attestation', name: 'Key attestation', platform: 'Android', vouches: 'The device’s secure hardware vouches for the app that made the key and for a locked, verified device.' },
];

export const VERDICTS = ['trusted', 'suspicious', 'untrusted'] as const;

export type VerdictName = (typeof VERDICTS)[number];

/** The tag tone of a verdict, the same everywhere in the console. */
export const VERDICT_TONE: Record<VerdictName, 'ok' | 'warn' | 'bad'> = { trusted: 'ok', suspicious: 'warn', untrusted: 'bad' };
