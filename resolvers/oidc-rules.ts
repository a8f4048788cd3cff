import type { OidcRuleConnectionResolvers, OidcRuleResolvers, Resolvers } from '../src/generated/graphql';
import type { OidcRuleDoc } from '../src/data/oidc-rules-repo';
import type { OidcRuleConnectionPage } from '../src/services/pages';
import { createOidcRule, deleteOidcRule } from '../src/services/oidc-rules-service';
import { exchangeOidcToken } from '../src/services/oidc-exchange-service';
import { dryRunOidcRules } from '../src/services/oidc-dry-run-service';
import { connectionFields, type MappedResolvers } from './views';

/** The internal slot has no field: it stays inside. */
const oidcRule: MappedResolvers<OidcRuleResolvers, OidcRuleDoc> = {
  id: (r) => r._id,
  events: (r) => r.events ?? null, // absent on rules stored before the field existed
};

const oidcRuleConnection: MappedResolvers<OidcRuleConnectionResolvers, OidcRuleConnectionPage> = connectionFields<OidcRuleDoc>();

export const ruleResolvers: Resolvers = {
  Query: {
    dryRunOidcRules: async (_p, { appId, claims }, ctx) => dryRunOidcRules(ctx, appId, claims),
  },
  Mutation: {
    createOidcRule: (_p, { appId, input }, ctx) => createOidcRule(ctx, appId, input),
    deleteOidcRule: async (_p, { appId, ruleId }, ctx) => {
      await deleteOidcRule(ctx, appId, ruleId);
      return true;
    },
    // The arguments are untrusted until the exchange has verified the token.
    exchangeOidcToken: async (_p, args, ctx) => exchangeOidcToken(ctx, args.token, args.appId),
  },
  OidcRule: oidcRule,
  OidcRuleConnection: oidcRuleConnection,
};
