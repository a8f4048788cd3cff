import type { RequestContext } from './context';
import { appAccess } from '../auth/authorize';
import { MAX_RULES_PER_APP, type OidcRuleDoc } from '../data/oidc-rules-repo';
import { notFound, validationFailed } from '../core/errors';
import { newId } from '../core/ids';
import { grantedScopes } from '../auth/scopes';
import { scopeErrors } from '../oidc/rule-policy';
import { providerModel } from '../oidc/providers/registry';
import { isProvider, type RuleInput } from '../oidc/providers/model';
import { defaultIssuer, issuerAllowed, issuerHint, issuerPolicyOf } from '../oidc/issuers';
import type { FieldError } from '../core/errors';
import { actorOf, recordAudit } from './audit-service';
import type { AppDoc } from '../data/apps-repo';
import { firstOfMore, keysetConnection, pageSize, resumeAfter, type OidcRuleConnectionPage, type PageArgs } from './pages';


/** A rule as a transport hands it over: the provider as text, checked here. */
export type CreateRuleInput = Omit<RuleInput, 'provider'> & { provider?: string | null };

/** The issuer a new rule trusts, or the field error that refuses it. */
function issuerOf(ctx: RequestContext, input: RuleInput): { issuer: string | null; errors: FieldError[] } {
  const provider = input.provider ?? 'github';
  const policy = issuerPolicyOf(ctx.deps.config);
  if (provider === 'github') {
    // GitHub rules keep trusting the configured issuer, whatever it becomes: stored as null.
    const ok = input.issuer == null || input.issuer === policy.githubIssuer;
    return { issuer: null, errors: ok ? [] : [{ pointer: '/issuer', message: issuerHint('github') }] };
  }
  const issuer = input.issuer ?? defaultIssuer(provider, policy);
  if (issuer === null) return { issuer, errors: [{ pointer: '/issuer', message: `required for ${provider} rules: ${issuerHint(provider)}` }] };
  return { issuer, errors: issuerAllowed(provider, issuer, policy) ? [] : [{ pointer: '/issuer', message: issuerHint(provider) }] };
}

/**
 * Creates a trust rule (rules:write, or admin staff). Refusals of spec rule 6, per provider, and the 20-rule limit
 * are 422. An issuer is one provider's within an app: a second provider naming it would judge its tokens by other
 * claims.
 */
export async function createOidcRule(ctx: RequestContext, appId: string, unchecked: CreateRuleInput): Promise<OidcRuleDoc> {
  await appAccess(ctx, 'rules:write', appId, { write: true });
  if (unchecked.provider != null && !isProvider(unchecked.provider)) {
    throw validationFailed([{ pointer: '/provider', message: 'must be github, gitlab, buildkite, circleci or bitbucket' }], 'The trust rule is not allowed.');
  }
  const input: RuleInput = { ...unchecked, provider: unchecked.provider ?? undefined };
  const provider = input.provider ?? 'github';
  const { issuer, errors: issuerErrors } = issuerOf(ctx, input);
  const errors = [...issuerErrors, ...providerModel(provider).ruleErrors(input), ...scopeErrors(input.scopes)];
  if (errors.length === 0 && issuer !== null) {
    const other = (await ctx.repos.oidcRules.listForApp(appId)).find((rule) => rule.issuer === issuer && (rule.provider ?? 'github') !== provider);
    if (other) errors.push({ pointer: '/issuer', message: `already trusted by ${other._id} as a ${other.provider} issuer: one issuer is one provider's` });
  }
  if (errors.length) throw validationFailed(errors, 'The trust rule is not allowed.');
  const doc = await ctx.repos.oidcRules.insertIfRoom({
    _id: newId('rul'),
    appId,
    ...(provider === 'github' ? {} : { provider, issuer }),
    subjectPattern: input.subjectPattern ?? null,
    workflowRef: input.workflowRef ?? null,
    environment: input.environment ?? null,
    scopes: grantedScopes(input.scopes),
    repositoryId: input.repositoryId ?? null,
    repositoryOwnerId: input.repositoryOwnerId ?? null,
    events: input.events ?? null,
    ...(provider === 'github'
      ? {}
      : {
          namespaceId: input.namespaceId ?? null,
          projectId: input.projectId ?? null,
          configRef: input.configRef ?? null,
          protectedRefOnly: input.protectedRefOnly ?? null,
          organizationSlug: input.organizationSlug ?? null,
          pipelineSlug: input.pipelineSlug ?? null,
          branch: input.branch ?? null,
          contextIds: input.contextIds ?? null,
          vcsOrigin: input.vcsOrigin ?? null,
          organizationId: input.organizationId ?? null,
          workspaceUuid: input.workspaceUuid ?? null,
          repositoryUuid: input.repositoryUuid ?? null,
          deploymentEnvironmentUuid: input.deploymentEnvironmentUuid ?? null,
        }),
    releaseBuilds: input.releaseBuilds ?? false,
    createdAt: ctx.clock.now(),
  });
  if (!doc) throw validationFailed([{ pointer: '', message: `an app has at most ${MAX_RULES_PER_APP} trust rules` }], 'The app has too many trust rules.');
  await recordAudit(ctx, {
    appId,
    action: 'oidc.rule_created',
    ruleId: doc._id,
    actor: actorOf(ctx),
    details: { provider, ...(issuer ? { issuer } : {}), subjectPattern: doc.subjectPattern ?? describeRule(doc), scopes: doc.scopes.join(' '), releaseBuilds: doc.releaseBuilds ?? false },
  });
  return doc;
}

/** A one-line account of a rule without a subject pattern, for the audit trail. */
function describeRule(rule: OidcRuleDoc): string {
  const pins: [string, unknown][] = [
    ['organization', rule.organizationSlug],
    ['pipeline', rule.pipelineSlug],
    ['project', rule.projectId],
    ['workspace', rule.workspaceUuid],
    ['repository', rule.repositoryUuid],
    ['branch', rule.branch],
  ];
  return pins.filter(([, value]) => value != null).map(([name, value]) => `${name}:${String(value)}`).join(' ');
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
    details: { provider: deleted.provider ?? 'github', subjectPattern: deleted.subjectPattern ?? describeRule(deleted) },
  });
}

/** Trust rules of the app, newest first. */
export async function oidcRulesConnection(ctx: RequestContext, app: AppDoc, args: PageArgs): Promise<OidcRuleConnectionPage> {
  await appAccess(ctx, 'rules:read', app._id, { write: false });
  const size = pageSize(args.first);
  const kind = 'connection:trust_rules';
  const bound = { appId: app._id };
  const after = resumeAfter(ctx, kind, bound, args.after);
  const docs = await ctx.repos.oidcRules.page(app._id, size, after);
  return keysetConnection(ctx, { kind, bound, after, ...firstOfMore(docs, size), timeOf: (d) => d.createdAt }, () => ctx.repos.oidcRules.count(app._id));
}
