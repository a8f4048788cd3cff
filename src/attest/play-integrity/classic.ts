import type { AttestReason } from '../reasons';
import type { PlayIntegrityKeys } from './keys';
import { openClassicToken } from './token';
import { checkIntegrityPayload, type IntegrityExpectations } from './verdict';

/**
 * Verifies a classic Play Integrity token locally, as Google describes for classic requests
 * (https://developer.android.com/google/play/integrity/classic): open the JWE with the app's decryption key, verify
 * the JWS inside with its verification key, then check the verdict against the request. Reasons as in token.ts and
 * verdict.ts; `versionCode` whenever the verified verdict carries one. Pure: no database, no network. Never throws,
 * whatever the token or keys hold.
 */
export async function verifyPlayIntegrity(input: { token: string; keys: PlayIntegrityKeys } & IntegrityExpectations): Promise<{ reasons: AttestReason[]; versionCode?: number }> {
  try {
    const opened = await openClassicToken(input.token, input.keys);
    if ('reason' in opened) return { reasons: [opened.reason] };
    // No requestHash: that is a standard request's, and a classic verdict is always checked against the nonce.
    const { packageName, nonce, recordedSigners, minDeviceIntegrity, now } = input;
    return checkIntegrityPayload(opened.payload, { packageName, nonce, recordedSigners, minDeviceIntegrity, now });
  } catch {
    // Reached only through a defect (the steps above catch what they call); refuse rather than throw.
    return { reasons: ['token_malformed'] };
  }
}
