/**
 * Verification of a CI job's OIDC token (spec, POST /v1/auth/oidc, checks 1 to 6). Every failure is an OidcRefusal
 * with its reason; nothing else escapes, including the plain TypeErrors jose raises for some inputs.
 */
import { decodeProtectedHeader, errors as joseErrors, importJWK, jwtVerify, type JWK, type JWTPayload, type KeyLike } from 'jose';
import { OidcRefusal, isOidcRefusal, type RefusalReason } from './refusal';
import type { IssuerKeys } from './issuer-keys';
import { resolveSubject, type NamedSubject } from './subject';

export const MAX_TOKEN_LENGTH = 8192;
export const CLOCK_TOLERANCE_S = 60;
export const MAX_TOKEN_LIFETIME_S = 3600;
const MAX_JTI_LENGTH = 256;
const PULL_REQUEST_EVENTS = ['pull_request', 'pull_request_target'];
// Headers that would let the token choose its own key (jwk, jku, x5u, x5c, x5t), demand extensions (crit), or nest
// another token (cty): none of them is ever honoured (RFC 8725, sections 2.4 and 3.11).
const FORBIDDEN_HEADERS = ['jwk', 'jku', 'x5u', 'x5c', 'x5t', 'x5t#S256', 'crit', 'cty'];
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

type Alg = 'RS256' | 'ES256';

export interface VerifierOptions {
  issuer: string;
  audience: string;
  now: Date;
}

/** What a verified token says, every field checked. */
export interface VerifiedOidcToken {
  issuer: string;
  sub: string;
  subject: NamedSubject; // sub in named form, proven to belong to `repository`
  jti: string;
  exp: number;
  workflowRef: string | null; // claim job_workflow_ref
  environment: string | null;
  repositoryId: string | null;
  repositoryOwnerId: string | null;
}

const refuse = (reason: RefusalReason, subject: string | null = null): never => {
  throw new OidcRefusal(reason, subject);
};

const optionalString = (value: unknown): string | null => (typeof value === 'string' && value.length > 0 ? value : null);

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

async function issuerKey(keys: IssuerKeys, alg: Alg, kid: string): Promise<KeyLike | Uint8Array> {
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
  if (error instanceof joseErrors.JWTExpired) return new OidcRefusal('expired', optionalString(error.payload.sub));
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    const subject = optionalString(error.payload.sub);
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

function checkClaims(payload: JWTPayload, opts: VerifierOptions): VerifiedOidcToken {
  const sub = typeof payload.sub === 'string' && payload.sub.length > 0 ? payload.sub : refuse('missing_claim');
  // jose accepts an array audience that contains ours; only the exact string is ours alone.
  if (typeof payload.aud !== 'string' || payload.aud !== opts.audience) refuse('audience', sub);
  const { exp, iat } = payload;
  if (typeof exp !== 'number' || typeof iat !== 'number') return refuse('missing_claim', sub);
  // jose does not bound the lifetime a token gives itself.
  if (exp - iat > MAX_TOKEN_LIFETIME_S || exp <= iat) refuse('lifetime', sub);
  if (iat > opts.now.getTime() / 1000 + CLOCK_TOLERANCE_S) refuse('not_yet_valid', sub);
  const jti = typeof payload.jti === 'string' && payload.jti.length > 0 && payload.jti.length <= MAX_JTI_LENGTH ? payload.jti : refuse('missing_claim', sub);
  const repository = typeof payload.repository === 'string' ? payload.repository : refuse('missing_claim', sub);
  const repositoryId = optionalString(payload.repository_id);
  const repositoryOwnerId = optionalString(payload.repository_owner_id);
  const subject = resolveSubject({ sub, repository, repositoryId, repositoryOwnerId }) ?? refuse('subject_mismatch', sub);
  // Pull-request jobs run code from forks: never trusted, even when a rule would match.
  const eventName = optionalString(payload.event_name);
  if (eventName !== null && PULL_REQUEST_EVENTS.includes(eventName)) refuse('pull_request', sub);
  if (subject.context === 'pull_request') refuse('pull_request', sub);
  return {
    issuer: opts.issuer,
    sub,
    subject,
    jti,
    exp,
    workflowRef: optionalString(payload.job_workflow_ref),
    environment: optionalString(payload.environment),
    repositoryId,
    repositoryOwnerId,
  };
}

/** Verifies an OIDC token of the configured issuer; throws OidcRefusal with the reason on any failure. */
export async function verifyOidcToken(keys: IssuerKeys, opts: VerifierOptions, unverifiedToken: string): Promise<VerifiedOidcToken> {
  try {
    // Before any parsing: the length is the one thing we may look at in a token of any size.
    if (unverifiedToken.length > MAX_TOKEN_LENGTH) refuse('too_long');
    if (!COMPACT_JWS.test(unverifiedToken)) refuse('malformed');
    const { alg, kid } = checkHeader(unverifiedToken);
    const key = await issuerKey(keys, alg, kid);
    const { payload } = await jwtVerify(unverifiedToken, key, {
      algorithms: [alg], // the one algorithm the key's type allows (checked above): the header cannot pick another
      issuer: opts.issuer, // exact comparison with the one configured issuer
      audience: opts.audience, // exact; an array audience is refused in checkClaims
      clockTolerance: CLOCK_TOLERANCE_S, // spec, Limits: clock tolerance 60 seconds
      currentDate: opts.now, // the service clock, so tests move time instead of sleeping
      requiredClaims: ['iss', 'aud', 'sub', 'exp', 'iat', 'jti'], // spec check 4; jose then checks each present one
      maxTokenAge: MAX_TOKEN_LIFETIME_S, // iat at most an hour ago (plus tolerance): no replay of a stale iat
      crit: {}, // no critical extension is understood (crit is also refused outright above)
      typ: undefined, // typ is optional for GitHub; checked above (absent or JWT)
    });
    return checkClaims(payload, opts);
  } catch (error) {
    throw reasonOf(error, opts.now);
  }
}
