import { createHash, randomUUID } from 'node:crypto';
import type { RequestContext } from '../context';
import type { AttestVerdict } from '../../attest/reasons';
import type { Platform } from '../../scan';

/** How long a verdict token is good for: long enough to reach the app's backend with the request it vouches for. */
export const VERDICT_TOKEN_TTL_MS = 5 * 60_000;

export interface VerdictClaims {
  appId: string;
  verdict: AttestVerdict;
  engine: string;
  platform: Platform;
  keyId: string | null;
  buildId: string | null;
  nonce: string;
}

/**
 * The verdict as a JWT the app's backend checks offline against GET /v1/attest/jwks (docs/attestation.md, "Checking
 * a verdict"): ES256, signed by the attestation key set, `iss` the service's public address, `sub` and `aud` the
 * app. The nonce travels as its SHA-256 only: the backend that issued it can compare, nobody else learns it.
 */
export function signVerdictToken(ctx: RequestContext, claims: VerdictClaims): Promise<string> {
  const expiresAt = new Date(ctx.clock.now().getTime() + VERDICT_TOKEN_TTL_MS);
  return ctx.deps.attestKeys.sign(
    'verdict',
    {
      sub: claims.appId,
      aud: claims.appId,
      jti: randomUUID(),
      verdict: claims.verdict,
      engine: claims.engine,
      platform: claims.platform,
      keyId: claims.keyId,
      buildId: claims.buildId,
      nonceHash: createHash('sha256').update(claims.nonce, 'utf8').digest('base64url'),
    },
    expiresAt,
  );
}
