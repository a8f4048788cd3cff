import type { X509Certificate } from 'node:crypto';
import type { AttestReason } from '../reasons';
import { type AppAttestApp, type AppAttestKey, aaguidOf, rpIdHashOf, sha256 } from './app';
import { readAttestationObject } from './attestation-object';
import { chainReasons } from './chain';

export interface AppAttestationInput {
  /** The attestation object's CBOR bytes. */
  object: Buffer;
  /** SHA-256 of the nonce's UTF-8 bytes. */
  clientDataHash: Buffer;
  app: AppAttestApp;
  /** The keyId the client sent with the attestation, when it sent one. */
  keyId?: string | null;
  roots: readonly X509Certificate[];
  now: Date;
}

/**
 * Apple's nine attestation checks (https://developer.apple.com/documentation/devicecheck/validating-apps-that-connect-to-your-server,
 * "Verify the attestation"), in an order that spends no cryptography on a token that fails anyway: the structure
 * first (a token that is not Apple's shape is `token_malformed` and nothing else), then every comparison (steps 2 to
 * 9, all of them, so the answer names each that failed), and the chain's signatures (step 1) only for a token that
 * passed them all. The key is returned only when no reason fired. Never throws.
 */
export function verifyAppAttestation(input: AppAttestationInput): { reasons: AttestReason[]; key?: AppAttestKey } {
  const parts = readAttestationObject(input.object);
  if (!parts) return { reasons: ['token_malformed'] };
  const { authData } = parts;
  const reasons = new Set<AttestReason>(); // insertion order is check order; a reason found twice is named once

  // Steps 2 to 4: the credCert's nonce extension is SHA-256(authData ‖ clientDataHash).
  if (!parts.nonce?.equals(sha256(authData.raw, input.clientDataHash))) reasons.add('challenge_mismatch');
  // Step 6: the key belongs to this app.
  if (!authData.rpIdHash.equals(rpIdHashOf(input.app))) reasons.add('team_mismatch');
  // Step 7: a new key has signed nothing yet.
  if (authData.signCount !== 0) reasons.add('counter_replayed');
  // Step 8: the environment the app is configured for.
  const aaguid = aaguidOf(input.app.environment);
  if (!aaguid || !authData.aaguid.equals(aaguid)) reasons.add('environment_mismatch');
  // Steps 5 and 9: the keyId is the SHA-256 of credCert's key and names the credential in authData. authData's COSE
  // key must be credCert's too (WebAuthn's rule; Apple's steps never read it). The client's keyId, if sent, is that one.
  const keyIdBytes = sha256(parts.point);
  const keyId = keyIdBytes.toString('base64');
  if (!authData.credentialId.equals(keyIdBytes) || !authData.point.equals(parts.point)) reasons.add('key_unknown');
  if (input.keyId != null && input.keyId !== keyId) reasons.add('key_unknown');

  if (reasons.size === 0) for (const r of chainReasons(parts.cred, parts.intermediate, input.roots, input.now)) reasons.add(r);
  if (reasons.size > 0) return { reasons: [...reasons] };
  return { reasons: [], key: { keyId, publicKeySpki: parts.spki } };
}
