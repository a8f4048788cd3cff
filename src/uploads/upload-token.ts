import type { SigningKeys } from '../crypto/signing-keys';

/** An upload URL lives 15 minutes (spec: Limits). */
export const UPLOAD_URL_TTL_MS = 15 * 60 * 1000;

/** What an upload token binds: the build, its app, the declared size and SHA-256. The expiry is the JWT's exp. */
export interface UploadGrant {
  buildId: string;
  appId: string;
  sizeBytes: number;
  sha256: string; // lowercase hex
}

/** Compact claims keep the token well under the contract's 600 characters (the hash travels as base64url). */
interface UploadClaims {
  bld: string;
  app: string;
  size: number;
  sha: string;
}

const hexToB64url = (hex: string) => Buffer.from(hex, 'hex').toString('base64url');
const b64urlToHex = (b64: string) => Buffer.from(b64, 'base64url').toString('hex');

export function signUploadToken(keys: SigningKeys, grant: UploadGrant, expiresAt: Date): Promise<string> {
  const claims: UploadClaims = { bld: grant.buildId, app: grant.appId, size: grant.sizeBytes, sha: hexToB64url(grant.sha256) };
  return keys.sign('upload', { ...claims }, expiresAt);
}

export function uploadUrl(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl}/v1/uploads/${token}`;
}

/**
 * Verifies an upload token: signature by a service key that is not revoked, typ `upload`, issuer, expiry (all in
 * SigningKeys.verify), then the shape of the claims. Null for every failure: the caller answers one 403.
 */
export async function verifyUploadToken(keys: SigningKeys, unverifiedToken: string): Promise<UploadGrant | null> {
  const verified = await keys.verify('upload', unverifiedToken);
  if (!verified) return null;
  const { bld, app, size, sha } = verified.claims as Partial<UploadClaims>;
  if (typeof bld !== 'string' || typeof app !== 'string' || typeof sha !== 'string') return null;
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 1) return null;
  const sha256 = b64urlToHex(sha);
  if (sha256.length !== 64) return null;
  return { buildId: bld, appId: app, sizeBytes: size, sha256 };
}
