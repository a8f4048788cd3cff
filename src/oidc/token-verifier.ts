/**
 * Verification of a CI job's OIDC token (spec, POST /v1/auth/oidc, checks 1 to 6). Every failure is an OidcRefusal
 * with its reason; nothing else escapes, including the plain TypeErrors jose raises for some inputs.
 */
import { createHash } from 'node:crypto';
import { decodeProtectedHeader, errors as joseErrors, importJWK, jwtVerify, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { OidcRefusal, isOidcRefusal, type RefusalReason } from './refusal';
import type { IssuerKeys } from './issuer-keys';
import type { ProviderModel } from './providers/model';

export const MAX_TOKEN_LENGTH = 8192;
export const CLOCK_TOLERANCE_S = 60;
export const MAX_TOKEN_LIFETIME_S = 3600;
const MAX_JTI_LENGTH = 256;
// Headers that would carry or point at a key of the token's choosing (jwk, jku, x5u, x5c), demand extensions (crit),
// or nest another token (cty): refused (RFC 8725, sections 2.4 and 3.11). GitHub puts x5t in every header: it and
// x5t#S256 only name a certificate, which we never look up by them (the key is the issuer's key with this kid), so
// they are ignored hints.
const FORBIDDEN_HEADERS = ['jwk', 'jku', 'x5u', 'x5c', 'crit', 'cty'];
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

type Alg = 'RS256' | 'ES256';

export interface VerifierOptions {
  issuer: string;
  audience: string;
  now: Date;
}

/** What a verified token says: its signature, time, issuer, audience and subject checked. */
export interface VerifiedOidcToken {
  issuer: string;
  sub: string;
  /** The token's `jti`; for a provider whose tokens carry none, `sha256:` and the digest of its signed part. */
  jti: string;
  exp: number;
  /** The whole decoded payload, for the rule evaluator (never the token). */
  claims: Readonly<Record<string, unknown>>;
}

const refuse = (reason: RefusalReason, verifiedClaims: Readonly<Record<string, unknown>> | null = null): never => {
  throw new OidcRefusal(reason, verifiedClaims);
};

function checkHeader(unverifiedToken: string): { alg: Alg; kid: string } {
  let unverifiedHeader: Record<string, unknown>;
  try {
    unverifiedHeader = decodeProtectedHeader(unverifiedToken) as Record<string, unknown>;
  } catch {
    return refuse('malformed');
  }
  if (FORBIDDEN_HEADERS.some((name) => name in unverifiedHeader)) refuse('forbidden_header');
  // typ is optional; when present it must say JWT (RFC 7519, 5.1): anything else is another kind of token.
  if ('typ' in unverifiedHeader && (typeof unverifiedHeader.typ !== 'string' || unverifiedHeader.typ.toUpperCase() !== 'JWT')) refuse('forbidden_header');
  const alg = unverifiedHeader.alg;
  if (alg !== 'RS256' && alg !== 'ES256') return refuse('algorithm');
  // jose would accept a token without kid when the key set holds a single key: we never guess the key.
  const kid = unverifiedHeader.kid;
  if (typeof kid !== 'string' || kid.length === 0 || kid.length > 256) return refuse('no_kid');
  return { alg, kid };
}

/** The number of bits of an RSA modulus given as base64url, leading zero bytes ignored. */
export function modulusBits(n: string): number {
  const bytes = Buffer.from(n, 'base64url');
  let i = 0;
  while (i < bytes.length && bytes[i] === 0) i++;
  if (i === bytes.length) return 0;
  return (bytes.length - i - 1) * 8 + bytes[i].toString(2).length;
}

/** Only the public members of the issuer's key, checked against the algorithm the token names. */
function publicJwkFor(jwk: JWK, alg: Alg): JWK {
  if (jwk.alg !== undefined && jwk.alg !== alg) refuse('algorithm');
  if (jwk.use !== undefined && jwk.use !== 'sig') refuse('algorithm');
  if (alg === 'RS256') {
    if (jwk.kty !== 'RSA' || typeof jwk.n !== 'string' || typeof jwk.e !== 'string') return refuse('algorithm');
    if (modulusBits(jwk.n) < 2048) refuse('key_size');
    return { kty: 'RSA', n: jwk.n, e: jwk.e };
  }
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || typeof jwk.x !== 'string' || typeof jwk.y !== 'string') return refuse('algorithm');
  return { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y };
}

async function issuerKey(keys: IssuerKeys, alg: Alg, kid: string): Promise<CryptoKey | Uint8Array> {
  let jwk: JWK | null;
  try {
    jwk = await keys.keyFor(kid);
  } catch {
    return refuse('jwks_unavailable'); // unreachable issuer, bad discovery document or key set (JwksUnavailable, fetch errors)
  }
  if (!jwk) return refuse('unknown_key');
  return importJWK(publicJwkFor(jwk, alg), alg);
}

/** Maps what jose raises to a reason. Claim errors come after the signature check, so their subject is authentic. */
function reasonOf(error: unknown, now: Date): OidcRefusal {
  if (isOidcRefusal(error)) return error;
  if (error instanceof joseErrors.JWTExpired) return new OidcRefusal('expired', error.payload);
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    const subject = error.payload;
    if (error.reason === 'missing') return new OidcRefusal('missing_claim', subject);
    // jose reports an iat too far in the past (maxTokenAge) and one in the future alike.
    const iatReason: RefusalReason = typeof error.payload.iat === 'number' && error.payload.iat * 1000 > now.getTime() ? 'not_yet_valid' : 'expired';
    const byClaim: Record<string, RefusalReason> = { iss: 'issuer', aud: 'audience', nbf: 'not_yet_valid', iat: iatReason };
    return new OidcRefusal(byClaim[error.claim] ?? 'malformed', subject);
  }
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return new OidcRefusal('bad_signature');
  if (error instanceof joseErrors.JOSEAlgNotAllowed || error instanceof joseErrors.JOSENotSupported) return new OidcRefusal('algorithm');
  return new OidcRefusal('malformed'); // JWSInvalid, JWTInvalid, TypeError and anything else
}

/** The one-use key of a token without `jti`: the digest of its signed part (`<header>.<payload>`). */
export function signedPartDigest(token: string): string {
  return `sha256:${createHash('sha256').update(token.slice(0, Math.max(0, token.lastIndexOf('.')))).digest('base64url')}`;
}

const usable = (value: unknown) => (typeof value === 'string' && value.length > 0) || (typeof value === 'number' && Number.isFinite(value));

function checkClaims(model: ProviderModel, payload: JWTPayload, opts: VerifierOptions, token: string): VerifiedOidcToken {
  const sub = typeof payload.sub === 'string' && payload.sub.length > 0 ? payload.sub : refuse('missing_claim', payload);
  // jose would accept an array audience that contains ours; each provider says what its tokens may carry (exactly
  // our string, everywhere but Bitbucket).
  if (!model.token.audience(payload.aud, opts.audience, payload)) refuse('audience', payload);
  const { exp, iat, nbf } = payload;
  if (typeof exp !== 'number' || typeof iat !== 'number') return refuse('missing_claim', payload);
  if (nbf !== undefined && typeof nbf !== 'number') refuse('malformed', payload);
  // jose does not bound the lifetime a token gives itself. GitHub's starts at the earlier of iat and nbf; a provider
  // that sets nbf a fixed few seconds before iat (GitLab) is measured from iat, its nbf held to that lead.
  const lead = model.token.nbfLeadS;
  const start = lead === null ? Math.min(iat, nbf ?? iat) : iat;
  if (lead !== null && nbf !== undefined && iat - nbf > lead) refuse('lifetime', payload);
  if (exp - start > MAX_TOKEN_LIFETIME_S || exp <= iat) refuse('lifetime', payload);
  const latestStart = opts.now.getTime() / 1000 + CLOCK_TOLERANCE_S;
  if (iat > latestStart || (nbf !== undefined && nbf > latestStart)) refuse('not_yet_valid', payload);
  let jti: string;
  if (model.token.jti) {
    jti = typeof payload.jti === 'string' && payload.jti.length > 0 && payload.jti.length <= MAX_JTI_LENGTH ? payload.jti : refuse('missing_claim', payload);
  } else {
    // No jti: the token is used once by the digest of what its issuer signed (never of the signature, which an
    // ECDSA signature's holder can rewrite into a second valid one).
    jti = signedPartDigest(token);
  }
  if (model.requiredClaims.some((name) => !usable(payload[name]))) refuse('missing_claim', payload);
  // The subject must be explained by the token's own claims, and pull-request jobs are never trusted (checks 5, 6).
  const problem = model.tokenRefusal(payload);
  if (problem) refuse(problem, payload);
  return { issuer: opts.issuer, sub, jti, exp, claims: payload };
}

/** Verifies a token of one provider's issuer (`opts.issuer`); throws OidcRefusal with the reason on any failure. */
export async function verifyProviderToken(model: ProviderModel, keys: IssuerKeys, opts: VerifierOptions, unverifiedToken: string): Promise<VerifiedOidcToken> {
  try {
    // Before any parsing: the length is the one thing we may look at in a token of any size.
    if (unverifiedToken.length > MAX_TOKEN_LENGTH) refuse('too_long');
    if (!COMPACT_JWS.test(unverifiedToken)) refuse('malformed');
    const { alg, kid } = checkHeader(unverifiedToken);
    const key = await issuerKey(keys, alg, kid);
    const { payload } = await jwtVerify(unverifiedToken, key, {
      algorithms: [alg], // the one algorithm the key's type allows (checked above): the header cannot pick another
      issuer: opts.issuer, // exact comparison with the one issuer whose keys verified it
      clockTolerance: CLOCK_TOLERANCE_S, // spec, Limits: clock tolerance 60 seconds
      currentDate: opts.now, // the service clock, so tests move time instead of sleeping
      requiredClaims: model.token.jti ? ['iss', 'aud', 'sub', 'exp', 'iat', 'jti'] : ['iss', 'aud', 'sub', 'exp', 'iat'], // spec check 4
      maxTokenAge: MAX_TOKEN_LIFETIME_S, // iat at most an hour ago (plus tolerance): no replay of a stale iat
      crit: {}, // no critical extension is understood (crit is also refused outright above)
      typ: undefined, // typ is optional; checked above (absent or JWT)
    });
    return checkClaims(model, payload, opts, unverifiedToken);
  } catch (error) {
    throw reasonOf(error, opts.now);
  }
}
