import type { OidcRuleConnectionResolvers, OidcRuleResolvers, Resolvers } from '../src/generated/graphql';
import type { OidcRuleDoc } from '../src/data/oidc-rules-repo';
import type { OidcRuleConnectionPage } from '../src/services/pages';
import { createOidcRule, deleteOidcRule } from '../src/services/oidc-rules-service';
import { dryRunOidcRules } from '../src/services/oidc-dry-run-service';
import { connectionFields, type MappedResolvers } from './views';

/** The internal slot has no field: it stays inside. */
const oidcRule: MappedResolvers<OidcRuleResolvers, OidcRuleDoc> = {
  id: (r) => r._id,
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
