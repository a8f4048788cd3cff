import type { Resolvers } from '../src/generated/graphql';
import { createApiKeyAsStaff, revokeApiKeyAsStaff } from '../src/services/keys-service';
import { toApiKey } from './views';

export const keyResolvers: Resolvers = {
  Mutation: {
    createApiKey: async (_p, { input }, ctx) => {
      const created = await createApiKeyAsStaff(ctx, { ...input, mode: input.mode ?? 'live' });
      return { apiKey: toApiKey(created.doc), key: created.key };
    },
    revokeApiKey: async (_p, { id }, ctx) => toApiKey(await revokeApiKeyAsStaff(ctx, id)),
  },
};
