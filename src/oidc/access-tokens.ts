import type { Deps } from '../deps';
import type { AccessTokenPrincipal } from '../auth/principal';

/**
 * Verifies an access token minted by the OIDC exchange: signature by a non-revoked service key, expiry, and that
 * every trust rule that produced it still exists. Until the exchange mints tokens, no JWT is an access token.
 */
export async function verifyAccessToken(_deps: Deps, _unverifiedToken: string): Promise<AccessTokenPrincipal | null> {
  return null;
}
