import type { AppResolvers, OidcRuleConnectionResolvers, OidcRuleResolvers, Resolvers } from '../src/generated/graphql';
import type { RequestContext } from '../src/services/context';
import type { AppDoc } from '../src/data/apps-repo';
import type { OidcRuleDoc } from '../src/data/oidc-rules-repo';
import type { OidcRuleConnectionPage } from '../src/services/pages';
import { createOidcRule, deleteOidcRule, oidcRulesConnection } from '../src/services/oidc-rules-service';
import { dryRunOidcRules } from '../src/services/oidc-dry-run-service';
import { connectionFields, type MappedResolvers } from './views';

/** The App's trust rules (`trustRules`: the deprecated name of the same list). */
export const appOidcRuleFields: Required<Pick<AppResolvers<RequestContext, AppDoc>, 'oidcRules' | 'trustRules'>> = {
  oidcRules: (a, args, ctx) => oidcRulesConnection(ctx, a, args),
  trustRules: (a, args, ctx) => oidcRulesConnection(ctx, a, args),
};

/** The internal slot has no field: it stays inside. */
const oidcRule: MappedResolvers<OidcRuleResolvers, OidcRuleDoc> = {
  id: (r) => r._id,
  provider: (r) => r.provider ?? 'github', // absent on rules stored before other providers existed
  issuer: (r, _a, ctx) => r.issuer ?? ctx.deps.config.oidcIssuer,
  namespaceId: (r) => r.namespaceId ?? null,
  projectId: (r) => r.projectId ?? null,
  configRef: (r) => r.configRef ?? null,
  protectedRefOnly: (r) => r.protectedRefOnly ?? null,
  organizationSlug: (r) => r.organizationSlug ?? null,
  pipelineSlug: (r) => r.pipelineSlug ?? null,
  branch: (r) => r.branch ?? null,
  contextIds: (r) => r.contextIds ?? null,
  vcsOrigin: (r) => r.vcsOrigin ?? null,
  organizationId: (r) => r.organizationId ?? null,
  workspaceUuid: (r) => r.workspaceUuid ?? null,
  repositoryUuid: (r) => r.repositoryUuid ?? null,
  deploymentEnvironmentUuid: (r) => r.deploymentEnvironmentUuid ?? null,
  events: (r) => r.events ?? null, // absent on rules stored before the field existed
  releaseBuilds: (r) => r.releaseBuilds ?? false,
};

const oidcRuleConnection: MappedResolvers<OidcRuleConnectionResolvers, OidcRuleConnectionPage> = connectionFields<OidcRuleDoc>();

export const oidcRuleResolvers: Resolvers = {
  Query: {
    dryRunOidcRules: async (_p, { appId, claims }, ctx) => dryRunOidcRules(ctx, appId, claims),
  },
  Mutation: {
    createOidcRule: (_p, { appId, input }, ctx) => createOidcRule(ctx, appId, input),
    deleteOidcRule: async (_p, { appId, ruleId }, ctx) => {
      await deleteOidcRule(ctx, appId, ruleId);
      return true;
    },
  },
  OidcRule: oidcRule,
  OidcRuleConnection: oidcRuleConnection,
};
