import type { Resolvers } from '../src/generated/graphql';
import type { OidcRuleDoc } from '../src/data/oidc-rules-repo';
import { createOidcRule, deleteOidcRule, listOidcRules } from '../src/services/oidc-rules-service';
import { exchangeOidcToken } from '../src/services/oidc-exchange-service';
import { dryRunOidcRules } from '../src/services/oidc-dry-run-service';

/** Document -> GraphQL object; the internal slot stays inside. */
const toOidcRule = (doc: OidcRuleDoc) => ({
  id: doc._id,
  appId: doc.appId,
  subjectPattern: doc.subjectPattern,
  workflowRef: doc.workflowRef,
  environment: doc.environment,
  scopes: doc.scopes,
  repositoryId: doc.repositoryId,
  repositoryOwnerId: doc.repositoryOwnerId,
  events: doc.events ?? null,
  createdAt: doc.createdAt,
});

export const ruleResolvers: Resolvers = {
  Query: {
    oidcRules: async (_p, { appId }, ctx) => (await listOidcRules(ctx, appId)).map(toOidcRule),
    dryRunOidcRules: async (_p, { appId, claims }, ctx) => dryRunOidcRules(ctx, appId, claims),
  },
  Mutation: {
    createOidcRule: async (_p, { appId, input }, ctx) => toOidcRule(await createOidcRule(ctx, appId, input)),
    deleteOidcRule: async (_p, { appId, ruleId }, ctx) => {
      await deleteOidcRule(ctx, appId, ruleId);
      return true;
    },
    // The arguments are untrusted until the exchange has verified the token.
    exchangeOidcToken: async (_p, args, ctx) => exchangeOidcToken(ctx, args.token, args.appId),
  },
};
