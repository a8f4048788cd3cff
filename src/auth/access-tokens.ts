import type { Deps } from '../core/deps';
import type { AccessTokenPrincipal } from './principal';
import { ACCESS_TOKEN_SCOPES, type Scope } from './scopes';
import type { AppDoc } from '../data/apps-repo';
import type { OidcRuleDoc } from '../data/oidc-rules-repo';
import { grantedScopes } from './scopes';
import { newId } from '../core/ids';

/** Spec, Limits: access tokens live 10 minutes. */
export const ACCESS_TOKEN_TTL_S = 600;
const MAX_RULES_IN_TOKEN = 20;

export interface MintedAccessToken {
  token: string;
  /** The token's `jti`: names it where the service keeps what it knows of it (its job's provenance). */
  tokenId: string;
  scopes: Scope[];
  expiresAt: Date;
}

/**
 * Mints an access token for the rules a CI job's token matched: signed by the service key, naming the app and every
 * rule (oldest first), with the union of their scopes. Device and rules scopes can never be part of it. Its `jti` is
 * what the service keys records about the token by, never the token's text: an ECDSA signature can be rewritten
 * (s for n - s, or the unused bits of its last base64url character) and still verify, so one token has several
 * texts.
 */
export async function mintAccessToken(deps: Deps, app: AppDoc, rules: OidcRuleDoc[], subject: string): Promise<MintedAccessToken> {
  const scopes = grantedScopes(rules.flatMap((rule) => rule.scopes));
  const expiresAt = new Date(deps.clock.now().getTime() + ACCESS_TOKEN_TTL_S * 1000);
  const tokenId = newId('atk');
  const token = await deps.signingKeys.sign('access', { app: app._id, rules: rules.map((rule) => rule._id), scopes, sub: subject, jti: tokenId }, expiresAt);
  return { token, tokenId, scopes, expiresAt };
}

const isStringArray = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === 'string');

/**
 * Verifies an access token minted by the OIDC exchange, on every use: signature by a service key that is not
 * revoked and expiry (SigningKeys.verify), the app, and every trust rule that produced it still existing. A token
 * never grants more than its rules grant today, nor any scope outside the CI scopes.
 */
export async function verifyAccessToken(deps: Deps, unverifiedToken: string): Promise<AccessTokenPrincipal | null> {
  const verified = await deps.signingKeys.verify('access', unverifiedToken);
  if (!verified) return null;
  const { app: appId, rules: ruleIds, scopes, exp, jti } = verified.claims;
  if (typeof appId !== 'string' || !isStringArray(ruleIds) || !isStringArray(scopes) || typeof exp !== 'number' || typeof jti !== 'string') return null;
  const uniqueRuleIds = [...new Set(ruleIds)];
  if (uniqueRuleIds.length === 0 || uniqueRuleIds.length > MAX_RULES_IN_TOKEN) return null;

  const app = await deps.repos.apps.findById(appId);
  if (!app) return null;
  // Deleting any rule that produced the token cuts it off at once (spec, Authentication rule 7).
  const rules = await deps.repos.oidcRules.findManyForApp(app._id, uniqueRuleIds);
  if (rules.length !== uniqueRuleIds.length) return null;

  const allowed = new Set(grantedScopes(rules.flatMap((rule) => rule.scopes)));
  return {
    kind: 'oidc',
    appId: app._id,
    org: app.org,
    plan: app.plan,
    ruleIds: rules.map((rule) => rule._id),
    bucketRuleId: rules[0]._id, // oldest first: the earliest-created matching rule owns the shared bucket
    scopes: ACCESS_TOKEN_SCOPES.filter((scope) => scopes.includes(scope) && allowed.has(scope)),
    expiresAt: new Date(exp * 1000),
    tokenId: jti,
    ...(typeof verified.claims.sub === 'string' ? { subject: verified.claims.sub } : {}),
  };
}
