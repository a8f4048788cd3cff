import type { Resolvers } from '../src/generated/graphql';
import { exchangeOidcToken } from '../src/services/oidc-exchange-service';

export const oidcExchangeResolvers: Resolvers = {
  Mutation: {
    // The arguments are untrusted until the exchange has verified the token.
    exchangeOidcToken: async (_p, args, ctx) => exchangeOidcToken(ctx, args.token, args.appId),
  },
};
