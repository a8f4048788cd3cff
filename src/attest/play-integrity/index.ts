/**
 * The Play Integrity engine: classic tokens verified locally (classic.ts), standard tokens through a decoder
 * (standard.ts), one set of checks on the verdict (verdict.ts). Pure functions: the service supplies the keys, the
 * recorded signers and the clock, and maps the reasons to a verdict (src/attest/reasons.ts).
 */
export { parsePlayIntegrityKeys, type PlayIntegrityKeys } from './keys';
export { verifyPlayIntegrity } from './classic';
export { checkIntegrityPayload, type DeviceIntegrityLevel, type IntegrityExpectations } from './verdict';
export type { StandardIntegrityDecoder } from './standard';
