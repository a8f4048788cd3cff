import type { RequestContext } from './context';
import type { AppDoc } from '../data/apps-repo';
import type { OidcRuleDoc } from '../data/oidc-rules-repo';
import { DomainError } from '../core/errors';
import { mintAccessToken, ACCESS_TOKEN_TTL_S } from '../auth/access-tokens';
import { OidcRefusal, isOidcRefusal, type RefusalReason } from '../oidc/refusal';
import { evaluateRules, ruleClaimsOf, type RuleOutcome } from '../oidc/rule-evaluator';
import { CLOCK_TOLERANCE_S, verifyOidcToken } from '../oidc/token-verifier';
import { parsePattern, splitRepository } from '../oidc/subject';
import type { Scope } from '../auth/scopes';
import { provenanceFromClaims } from './builds/provenance';
import { recordAggregatedAudit, recordAudit } from './audit-service';
import { pinMatchedRules } from './oidc-rule-pinning';
import { notifyOidcDenied } from '../webhooks/enqueue';

export interface OidcExchangeResult {
  accessToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
  scopes: Scope[];
  appId: string;
}

/** The one answer to every refusal, whatever its cause: the caller learns nothing about apps, rules or checks. */
const refusedError = () => new DomainError('unauthorized', 'The token could not be exchanged.');

/** Refusals of a signed token outside its validity window: it proves nothing about who sends it now. */
const UNPROVEN_REASONS: RefusalReason[] = ['expired', 'not_yet_valid'];

/** A refusal of a verified token, with how each rule of the app judged it (for the owner's audit trail). */
class RuleRefusal extends OidcRefusal {
  constructor(
    reason: 'not_trusted',
    verifiedClaims: Readonly<Record<string, unknown>>,
    readonly rules: RuleOutcome[],
  ) {
    super(reason, verifiedClaims);
  }
}

/** How long a used jti is kept beyond the token's last verifiable instant. */
export const JTI_MARGIN_S = 300;

async function exchange(ctx: RequestContext, unverifiedToken: string, unverifiedAppId: string): Promise<OidcExchangeResult> {
  const { config } = ctx.deps;
  // One reading of the clock for the check and the jti claim: a later one could judge the claim after the record
  // expired while the check judged the token before (a replay at the very end of its life).
  const now = ctx.clock.now();
  const token = await verifyOidcToken(ctx.deps.oidcKeys, { issuer: config.oidcIssuer, audience: config.publicBaseUrl, now }, unverifiedToken);
  const app: AppDoc | null = await ctx.repos.apps.findById(unverifiedAppId);
  if (!app) throw new OidcRefusal('unknown_app', token.claims);
  const evaluation = evaluateRules(await ctx.repos.oidcRules.listForApp(app._id), token.claims); // oldest first
  if (evaluation.refusal) throw new OidcRefusal(evaluation.refusal, token.claims); // the verifier already refused these
  if (evaluation.matched.length === 0) throw new RuleRefusal('not_trusted', token.claims, evaluation.rules);
  const rules: OidcRuleDoc[] = await pinMatchedRules(ctx, app._id, evaluation.matched, token.claims);
  if (rules.length === 0) {
    // Every rule that matched by name was pinned to other ids by a concurrent job first: judged again as stored.
    throw new RuleRefusal('not_trusted', token.claims, evaluateRules(await ctx.repos.oidcRules.listForApp(app._id), token.claims).rules);
  }

  // jti is claimed before the token is minted, and kept past the last instant the token could verify (exp + leeway)
  // by JTI_MARGIN_S more, so a replay inside the leeway still fails on an instance whose clock lags the database's
  // (MongoDB's TTL monitor deletes by the database's clock); the unique id in shared storage gives exactly one winner
  // across instances.
  const keepUntil = new Date((token.exp + CLOCK_TOLERANCE_S + JTI_MARGIN_S) * 1000);
  if (!(await ctx.repos.jtis.claim(token.issuer, token.jti, now, keepUntil))) throw new OidcRefusal('replayed', token.claims);

  const minted = await mintAccessToken(ctx.deps, app, rules, token.sub);
  await ctx.repos.tokenProvenance.record(minted.tokenId, app._id, provenanceFromClaims(token.claims), minted.expiresAt);
  await recordAudit(ctx, {
    appId: app._id,
    action: 'oidc.exchanged',
    subject: token.sub,
    ruleId: rules[0]._id,
    details: { rules: rules.map((rule) => rule._id).join(' '), scopes: minted.scopes.join(' ') },
  });
  return { accessToken: minted.token, tokenType: 'Bearer', expiresIn: ACCESS_TOKEN_TTL_S, scopes: minted.scopes, appId: app._id };
}

async function recordRefusal(ctx: RequestContext, unverifiedAppId: string, refusal: OidcRefusal): Promise<void> {
  // Never the token: the app id as given, the verified subject (if any) and the reason.
  const fields = { appId: unverifiedAppId.slice(0, 64), reason: refusal.reason };
  if (refusal.reason === 'jwks_unavailable') ctx.logger.warn(fields, 'oidc exchange refused: issuer keys unavailable');
  else ctx.logger.info(fields, 'oidc exchange refused');
  // An unknown app has no audit trail to write to (the recorder skips it).
  const verified = refusal.verifiedClaims;
  const jti = verified && typeof verified.jti === 'string' && verified.jti.length > 0 ? verified.jti : null;
  const app = await ctx.repos.apps.findById(unverifiedAppId);
  const rules = app ? await ctx.repos.oidcRules.listForApp(app._id) : [];
  if (verified === null || jti === null || UNPROVEN_REASONS.includes(refusal.reason) || !rulesNameOwner(rules, verified)) {
    // Nothing proven about who sends it now (an expired token may be a leaked one replayed), or a job of an owner
    // none of the app's rules names (anyone can get a token for this audience from a repository of their own, and
    // would otherwise write an entry of their choosing into any app's trail per token): no claims, and one counted
    // entry per app, reason and minute.
    if (await recordAggregatedAudit(ctx, { appId: unverifiedAppId, action: 'oidc.denied', reason: refusal.reason })) {
      await notifyOidcDenied(ctx.deps, { appId: unverifiedAppId, reason: refusal.reason, subject: null });
    }
    return;
  }
  // A live token signed by the issuer, of an owner the app trusts in some rule: the owner sees the claims rules
  // look at and why each rule did not match, once per token (its repetitions are counted in the same entry).
  const first = await recordAggregatedAudit(ctx, {
    appId: unverifiedAppId,
    action: 'oidc.denied',
    reason: refusal.reason,
    bucket: `jti:${ctx.deps.config.oidcIssuer}:${jti}`,
    subject: refusal.subject,
    claims: { ...ruleClaimsOf(verified) },
    rules: refusal instanceof RuleRefusal ? refusal.rules : evaluateRules(rules, verified).rules,
  });
  // Alerts follow the audit trail's aggregation: one per app, reason and minute (or per token), so anyone naming an
  // app id cannot flood its webhooks.
  if (first) await notifyOidcDenied(ctx.deps, { appId: unverifiedAppId, reason: refusal.reason, subject: refusal.subject });
}

/** Whether some rule names the verified token's repository owner: by name in its pattern, or by its pinned id. */
function rulesNameOwner(rules: OidcRuleDoc[], verifiedClaims: Readonly<Record<string, unknown>>): boolean {
  const owner = splitRepository(typeof verifiedClaims.repository === 'string' ? verifiedClaims.repository : null)?.owner.toLowerCase();
  const ownerId = verifiedClaims.repository_owner_id;
  return rules.some(
    (rule) =>
      (owner !== undefined && parsePattern(rule.subjectPattern)?.owner.toLowerCase() === owner) ||
      (rule.repositoryOwnerId !== null && rule.repositoryOwnerId === ownerId),
  );
}

/**
 * Exchanges a CI job's OIDC token for an access token (spec, POST /v1/auth/oidc). Needs no credential: the token is
 * the proof. Every refusal is the same unauthorized error; the reason goes to the audit trail only.
 */
export async function exchangeOidcToken(ctx: RequestContext, unverifiedToken: string, unverifiedAppId: string): Promise<OidcExchangeResult> {
  try {
    return await exchange(ctx, unverifiedToken, unverifiedAppId);
  } catch (error) {
    if (!isOidcRefusal(error)) throw error; // our own failures (database down) stay 5xx: they reveal nothing
    await recordRefusal(ctx, unverifiedAppId, error);
    throw refusedError();
  }
}
