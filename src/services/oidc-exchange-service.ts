import type { RequestContext } from './context';
import type { AppDoc } from '../data/apps-repo';
import type { OidcRuleDoc } from '../data/oidc-rules-repo';
import { DomainError } from '../core/errors';
import { mintAccessToken, ACCESS_TOKEN_TTL_S } from '../auth/access-tokens';
import { OidcRefusal, isOidcRefusal, type RefusalReason } from '../oidc/refusal';
import { evaluateRules, type RuleOutcome } from '../oidc/providers/evaluate';
import { CLOCK_TOLERANCE_S, MAX_TOKEN_LENGTH, signedPartDigest, verifyProviderToken } from '../oidc/token-verifier';
import { providerModel } from '../oidc/providers/registry';
import { issuerPolicyOf } from '../oidc/issuers';
import { judgeOf, type Judge as ProviderJudge } from '../oidc/providers/judge';
import type { Scope } from '../auth/scopes';
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

/** The `iss` a token says it has, before anything is verified: only to choose whose keys to verify it with. */
function unverifiedIssuerOf(unverifiedToken: string): string | null {
  if (unverifiedToken.length > MAX_TOKEN_LENGTH) return null;
  const payload = unverifiedToken.split('.')[1];
  if (!payload) return null;
  try {
    const claims: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    const iss = typeof claims === 'object' && claims !== null ? (claims as { iss?: unknown }).iss : undefined;
    return typeof iss === 'string' && iss.length <= 512 ? iss : null;
  } catch {
    return null;
  }
}

/** Which provider judged the token, once known: the refusal's audit reads the claims through its model. */
interface Judge extends ProviderJudge {
  /** False while the token names an issuer no rule of the app trusts: its provider is unknown. */
  known: boolean;
  /** The token's one-use key when its provider sends no jti. */
  digest: string;
}

async function exchange(ctx: RequestContext, unverifiedToken: string, unverifiedAppId: string, judge: Judge): Promise<OidcExchangeResult> {
  const { config } = ctx.deps;
  // One reading of the clock for the check and the jti claim: a later one could judge the claim after the record
  // expired while the check judged the token before (a replay at the very end of its life).
  const now = ctx.clock.now();
  let app: AppDoc | null | undefined;
  let rules: OidcRuleDoc[] | undefined;
  const claimedIssuer = unverifiedIssuerOf(unverifiedToken);
  if (claimedIssuer !== null && claimedIssuer !== config.oidcIssuer) {
    // Another provider's issuer: its keys are fetched only when a rule of this app names it and the operator still
    // allows it, so no token can make the service fetch an address of its choosing.
    app = await ctx.repos.apps.findById(unverifiedAppId);
    rules = app ? await ctx.repos.oidcRules.listForApp(app._id) : [];
    const found = judgeOf(rules, claimedIssuer, issuerPolicyOf(config));
    if (!found) {
      judge.known = false;
      throw new OidcRefusal('issuer');
    }
    Object.assign(judge, found);
  }
  const { model, issuer } = judge;
  const token = await verifyProviderToken(model, ctx.deps.oidcKeys.keysOf(issuer), { issuer, audience: config.publicBaseUrl, now }, unverifiedToken);
  ctx.deps.instance.claimDrift.observe(model, token.claims, now, ctx.logger);
  app ??= await ctx.repos.apps.findById(unverifiedAppId);
  if (!app) throw new OidcRefusal('unknown_app', token.claims);
  const evaluate = (list: OidcRuleDoc[]) => evaluateRules(model, issuer, config.oidcIssuer, list, token.claims); // oldest first
  const evaluation = evaluate(rules ?? (await ctx.repos.oidcRules.listForApp(app._id)));
  if (evaluation.refusal) throw new OidcRefusal(evaluation.refusal, token.claims); // the verifier already refused these
  if (evaluation.matched.length === 0) throw new RuleRefusal('not_trusted', token.claims, evaluation.rules);
  const matched: OidcRuleDoc[] = await pinMatchedRules(ctx, app._id, model, evaluation.matched, token.claims, (rule) => evaluate([rule]).matched.length > 0);
  if (matched.length === 0) {
    // Every rule that matched by name was pinned to other ids by a concurrent job first: judged again as stored.
    throw new RuleRefusal('not_trusted', token.claims, evaluate(await ctx.repos.oidcRules.listForApp(app._id)).rules);
  }

  // jti is claimed before the token is minted, and kept past the last instant the token could verify (exp + leeway)
  // by JTI_MARGIN_S more, so a replay inside the leeway still fails on an instance whose clock lags the database's
  // (MongoDB's TTL monitor deletes by the database's clock); the unique id in shared storage gives exactly one winner
  // across instances. Per issuer: two providers' jtis never collide.
  const keepUntil = new Date((token.exp + CLOCK_TOLERANCE_S + JTI_MARGIN_S) * 1000);
  if (!(await ctx.repos.jtis.claim(token.issuer, token.jti, now, keepUntil))) throw new OidcRefusal('replayed', token.claims);

  const minted = await mintAccessToken(ctx.deps, app, matched, token.sub);
  await ctx.repos.tokenProvenance.record(minted.tokenId, app._id, model.provenance(token.claims), minted.expiresAt);
  await recordAudit(ctx, {
    appId: app._id,
    action: 'oidc.exchanged',
    subject: token.sub,
    ruleId: matched[0]._id,
    details: { provider: model.id, rules: matched.map((rule) => rule._id).join(' '), scopes: minted.scopes.join(' ') },
  });
  return { accessToken: minted.token, tokenType: 'Bearer', expiresIn: ACCESS_TOKEN_TTL_S, scopes: minted.scopes, appId: app._id };
}

async function recordRefusal(ctx: RequestContext, unverifiedAppId: string, refusal: OidcRefusal, judge: Judge): Promise<void> {
  // Never the token: the app id as given, the verified subject (if any) and the reason.
  const fields = { appId: unverifiedAppId.slice(0, 64), reason: refusal.reason };
  if (refusal.reason === 'jwks_unavailable') ctx.logger.warn(fields, 'oidc exchange refused: issuer keys unavailable');
  else ctx.logger.info(fields, 'oidc exchange refused');
  // An unknown app has no audit trail to write to (the recorder skips it).
  const verified = refusal.verifiedClaims;
  // A provider without jti: the token's one-use key, as the verifier made it (only its digest: never the token).
  const jti = verified && typeof verified.jti === 'string' && verified.jti.length > 0 ? verified.jti : verified && !judge.model.token.jti ? judge.digest : null;
  const app = await ctx.repos.apps.findById(unverifiedAppId);
  const rules = app ? await ctx.repos.oidcRules.listForApp(app._id) : [];
  const { model, issuer } = judge;
  const ownRules = rules.filter((rule) => (rule.provider ?? 'github') === model.id && (rule.issuer ?? ctx.deps.config.oidcIssuer) === issuer);
  if (verified === null || jti === null || UNPROVEN_REASONS.includes(refusal.reason) || !ownRules.some((rule) => model.namesTenant(rule, verified))) {
    // Nothing proven about who sends it now (an expired token may be a leaked one replayed), or a job of an owner
    // none of the app's rules names (anyone can get a token for this audience from a repository of their own, and
    // would otherwise write an entry of their choosing into any app's trail per token): no claims, and one counted
    // entry per app, reason and minute.
    if (await recordAggregatedAudit(ctx, { appId: unverifiedAppId, action: 'oidc.denied', reason: refusal.reason, provider: judge.known ? model.id : 'unknown' })) {
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
    bucket: `jti:${issuer}:${jti}`,
    provider: model.id,
    subject: refusal.subject,
    claims: model.ruleClaims(verified),
    rules: refusal instanceof RuleRefusal ? refusal.rules : evaluateRules(model, issuer, ctx.deps.config.oidcIssuer, rules, verified).rules,
  });
  // Alerts follow the audit trail's aggregation: one per app, reason and minute (or per token), so anyone naming an
  // app id cannot flood its webhooks.
  if (first) await notifyOidcDenied(ctx.deps, { appId: unverifiedAppId, reason: refusal.reason, subject: refusal.subject });
}

/**
 * Exchanges a CI job's OIDC token for an access token (spec, POST /v1/auth/oidc). Needs no credential: the token is
 * the proof. Every refusal is the same unauthorized error; the reason goes to the audit trail only.
 */
export async function exchangeOidcToken(ctx: RequestContext, unverifiedToken: string, unverifiedAppId: string): Promise<OidcExchangeResult> {
  // GitHub's until the token names another issuer that a rule of the app trusts.
  const judge: Judge = { model: providerModel('github'), issuer: ctx.deps.config.oidcIssuer, digest: '', known: true };
  try {
    return await exchange(ctx, unverifiedToken, unverifiedAppId, judge);
  } catch (error) {
    if (!isOidcRefusal(error)) throw error; // our own failures (database down) stay 5xx: they reveal nothing
    if (unverifiedToken.length <= MAX_TOKEN_LENGTH) judge.digest = signedPartDigest(unverifiedToken);
    await recordRefusal(ctx, unverifiedAppId, error, judge);
    throw refusedError();
  }
}
