/**
 * The App Attest engine: Apple's attestation and assertion checks as pure functions over bytes, a clock and the
 * configured roots. The caller decodes the token's base64url, hashes the nonce, and keeps keys and counters.
 */
export type { AppAttestApp, AppAttestKey } from './app';
export { verifyAppAttestation } from './attestation';
export { verifyAppAssertion } from './assertion';
