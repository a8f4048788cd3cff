import type { RequestContext } from './context';
import { appAccess } from '../auth/authorize';
import { MAX_RULES_PER_APP, type OidcRuleDoc } from '../data/oidc-rules-repo';
import { notFound, validationFailed } from '../core/errors';
import { newId } from '../core/ids';
import { grantedScopes } from '../auth/scopes';
import { ruleErrors, type RuleInput } from '../oidc/rule-policy';
import { actorOf, recordAudit } from './audit-service';


/** Creates a trust rule (rules:write, or admin staff). Refusals of spec rule 6 and the 20-rule limit are 422. */
export async function createOidcRule(ctx: RequestContext, appId: string, input: RuleInput): Promise<OidcRuleDoc> {
  await appAccess(ctx, 'rules:write', appId, { write: true });
  const errors = ruleErrors(input);
  if (errors.length) throw validationFailed(errors, 'The trust rule is not allowed.');
  const doc = await ctx.repos.oidcRules.insertIfRoom({
    _id: newId('rul'),
    appId,
    subjectPattern: input.subjectPattern,
    workflowRef: input.workflowRef ?? null,
    environment: input.environment ?? null,
    scopes: grantedScopes(input.scopes),
    repositoryId: input.repositoryId ?? null,
    repositoryOwnerId: input.repositoryOwnerId ?? null,
    events: input.events ?? null,
    releaseBuilds: input.releaseBuilds ?? false,
    createdAt: ctx.clock.now(),
  });
  if (!doc) throw validationFailed([{ pointer: '', message: `an app has at most ${MAX_RULES_PER_APP} trust rules` }], 'The app has too many trust rules.');
  await recordAudit(ctx, {
    appId,
    action: 'oidc.rule_created',
    ruleId: doc._id,
    actor: actorOf(ctx),
    details: { subjectPattern: doc.subjectPattern, scopes: doc.scopes.join(' '), releaseBuilds: doc.releaseBuilds ?? false },
  });
  return doc;
}

/** Deletes a rule; access tokens it produced stop working on their next use (they are checked on every use). */
export async function deleteOidcRule(ctx: RequestContext, appId: string, ruleId: string): Promise<void> {
  await appAccess(ctx, 'rules:write', appId, { write: true });
  const deleted = await ctx.repos.oidcRules.deleteForApp(appId, ruleId);
  if (!deleted) throw notFound('Trust rule');
  await recordAudit(ctx, {
    appId,
    action: 'oidc.rule_deleted',
    ruleId: deleted._id,
    actor: actorOf(ctx),
    details: { subjectPattern: deleted.subjectPattern },
  });
}
