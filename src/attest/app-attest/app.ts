import { createHash } from 'node:crypto';

/** The app an attestation must name, as the app's configuration holds it. */
export interface AppAttestApp {
  teamId: string;
  bundleId: string;
  environment: 'production' | 'development';
}

/** A key an attestation proved: what the service registers and later checks assertions with. */
export interface AppAttestKey {
  /** Standard base64 (44 characters) of the SHA-256 of the key's uncompressed point, as DCAppAttestService gives it. */
  keyId: string;
  /** DER SubjectPublicKeyInfo of the P-256 key. */
  publicKeySpki: Buffer;
}

export const sha256 = (...parts: Buffer[]): Buffer => createHash('sha256').update(Buffer.concat(parts)).digest();

/** rpIdHash is the SHA-256 of the App ID, `<teamId>.<bundleId>`, in attestations and assertions alike. */
export const rpIdHashOf = (app: AppAttestApp): Buffer => sha256(Buffer.from(`${app.teamId}.${app.bundleId}`, 'utf8'));

/**
 * The aaguid Apple writes for each environment: `appattestdevelop`, or `appattest` and seven zero bytes. Undefined
 * for anything else, so a configuration that is neither matches no attestation.
 */
export function aaguidOf(environment: AppAttestApp['environment']): Buffer | undefined {
  if (environment === 'development') return Buffer.from('appattestdevelop', 'latin1');
  if (environment === 'production') return Buffer.concat([Buffer.from('appattest', 'latin1'), Buffer.alloc(7)]);
  return undefined;
}
