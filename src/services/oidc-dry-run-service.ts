import type { RequestContext } from './context';
import { appAccess } from '../auth/authorize';
import type { Scope } from '../auth/scopes';
import { notFound, validationFailed, type FieldError } from '../core/errors';
import { evaluateRules, type RuleOutcome } from '../oidc/providers/evaluate';
import { judgeOf } from '../oidc/providers/judge';
import { issuerPolicyOf } from '../oidc/issuers';
import { providerModel } from '../oidc/providers/registry';
import type { RefusalReason } from '../oidc/refusal';
import { containsCompactJws } from '../oidc/token-shape';
import { actorOf, recordAggregatedAudit } from './audit-service';

/** One claim of a decoded token payload, as the caller pasted it (non-string values as their JSON text). */
export interface ClaimInput {
  name: string;
  value: string;
}

export interface DryRunResult {
  matches: boolean;
  scopes: Scope[];
  /** Why the exchange would refuse these claims whatever the rules say (pull request, subject), or null. */
  reason: RefusalReason | null;
  rules: RuleOutcome[];
}

export const MAX_DRY_RUN_CLAIMS = 64;
const MAX_NAME_LENGTH = 64;
const MAX_VALUE_LENGTH = 8192;
const NEVER_PASTE = 'looks like a token (a compact JWS): never paste tokens anywhere, paste the decoded payload\'s claims instead';

function claimErrors(claims: ClaimInput[]): FieldError[] {
  if (claims.length > MAX_DRY_RUN_CLAIMS) return [{ pointer: '/claims', message: `at most ${MAX_DRY_RUN_CLAIMS} claims` }];
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  for (const { name, value } of claims) {
    const pointer = `/claims/${name.slice(0, MAX_NAME_LENGTH).replace(/~/g, '~0').replace(/\//g, '~1')}`;
    // A pasted token is named first, whatever else is wrong, and its text is never echoed (the pointer is cut).
    if (containsCompactJws(name.slice(0, MAX_VALUE_LENGTH)) || containsCompactJws(value.slice(0, MAX_VALUE_LENGTH))) {
      errors.push({ pointer: containsCompactJws(name) ? '/claims' : pointer, message: NEVER_PASTE });
    } else if (name.length === 0 || name.length > MAX_NAME_LENGTH) errors.push({ pointer, message: `a claim name has 1 to ${MAX_NAME_LENGTH} characters` });
    else if (value.length > MAX_VALUE_LENGTH) errors.push({ pointer, message: `at most ${MAX_VALUE_LENGTH} characters` });
    else if (seen.has(name)) errors.push({ pointer, message: 'listed twice' });
    seen.add(name);
  }
  return errors;
}

/**
 * Answers what the exchange would do with these claims (rules:read, or staff): which rules match, the scopes it
 * would grant and each other rule's first failing check. The very evaluator the exchange runs; it verifies no
 * signature, mints nothing and claims no jti. Recorded as `oidc.dry_run`: one entry per app, caller, outcome (a
 * match, or the refusal's reason) and minute, with the first such call's claims and a count of the calls, so a
 * rules:read key cannot fill the app's trail (kept 400 days) with claims of its choosing at the rate its plan allows,
 * nor hide refused tries behind one matching call.
 */
export async function dryRunOidcRules(ctx: RequestContext, appId: string, claims: ClaimInput[]): Promise<DryRunResult> {
  await appAccess(ctx, 'rules:read', appId, { write: false });
  const app = await ctx.repos.apps.findById(appId);
  if (!app) throw notFound('App');
  const errors = claimErrors(claims);
  if (errors.length) {
    const pasted = errors.some((error) => error.message === NEVER_PASTE);
    throw validationFailed(errors, pasted ? 'Never paste a token: send the claims of its decoded payload.' : 'The claims are not valid.');
  }
  const payload: Record<string, unknown> = Object.fromEntries(claims.map(({ name, value }) => [name, value]));
  const rules = await ctx.repos.oidcRules.listForApp(appId);
  // As the exchange: the claims' `iss` chooses the provider (GitHub's when it names none or GitHub's issuer).
  const claimedIssuer = typeof payload.iss === 'string' ? payload.iss : null;
  const judge = judgeOf(rules, claimedIssuer, issuerPolicyOf(ctx.deps.config));
  const githubIssuer = ctx.deps.config.oidcIssuer;
  const evaluation = judge
    ? evaluateRules(judge.model, judge.issuer, githubIssuer, rules, payload)
    : { ...evaluateRules(providerModel('github'), claimedIssuer, githubIssuer, rules, payload), matches: false, scopes: [], refusal: 'issuer' as const };
  const claimsSeen = (judge?.model ?? providerModel('github')).ruleClaims(payload);
  const actor = actorOf(ctx);
  await recordAggregatedAudit(ctx, {
    appId: app._id,
    action: 'oidc.dry_run',
    reason: evaluation.refusal, // in the entry's key, as the outcome and minute are in its bucket
    bucket: `${actor}:${evaluation.matches ? 'match' : 'refused'}:minute:${Math.floor(ctx.clock.now().getTime() / 60_000)}`,
    subject: claimsSeen.sub ?? null,
    claims: { ...claimsSeen },
    rules: evaluation.rules,
    details: { matches: evaluation.matches, scopes: evaluation.scopes.join(' '), actor },
  });
  return { matches: evaluation.matches, scopes: evaluation.scopes, reason: evaluation.refusal, rules: evaluation.rules };
}
