/**
 * Why an OIDC exchange was refused. The reason is recorded in the audit trail (`oidc.denied`) and never told to the
 * caller: every refusal answers the same 401, so a caller cannot learn which apps have rules or which check failed.
 */
export const REFUSAL_REASONS = [
  'too_long', // over 8192 characters: refused before parsing
  'malformed', // not a compact JWS, or anything unexpected while reading it
  'algorithm', // not RS256/ES256, or not agreeing with the key's type
  'no_kid',
  'forbidden_header', // jwk, jku, x5u, x5c, crit, cty, or a typ other than JWT (x5t and x5t#S256 are ignored hints)
  'unknown_key', // no key of the issuer has this kid (after one refetch)
  'key_size', // RSA key under 2048 bits
  'jwks_unavailable', // the issuer's discovery document or key set could not be read
  'bad_signature',
  'issuer', // not the issuer of a rule of the app's (nor GitHub's): no key of it is fetched
  'audience',
  'expired',
  'not_yet_valid', // nbf or iat in the future (beyond the tolerance)
  'missing_claim',
  'lifetime', // exp - iat over one hour
  'subject_mismatch', // sub names another repository than the one the token claims
  'subject_unrecognized', // sub holds something the token's own claims do not explain (an unknown template key)
  'pull_request', // a pull or merge request, or a fork's build, on any provider
  'untrusted_trigger', // a GitLab pipeline triggered by another on an unprotected ref; a CircleCI SSH re-run
  'unknown_app',
  'not_trusted', // no trust rule of the app matches
  'replayed',
] as const;

export type RefusalReason = (typeof REFUSAL_REASONS)[number];

export class OidcRefusal extends Error {
  /** The token's `sub`, only once the signature is verified: an unverified subject is attacker text. */
  readonly subject: string | null;
  constructor(
    readonly reason: RefusalReason,
    /** The decoded payload, only once the signature is verified; null before (its claims are unproven). */
    readonly verifiedClaims: Readonly<Record<string, unknown>> | null = null,
  ) {
    super(`OIDC exchange refused: ${reason}`);
    this.name = 'OidcRefusal';
    this.subject = verifiedClaims && typeof verifiedClaims.sub === 'string' && verifiedClaims.sub.length > 0 ? verifiedClaims.sub : null;
  }
}

export function isOidcRefusal(error: unknown): error is OidcRefusal {
  return error instanceof OidcRefusal;
}
