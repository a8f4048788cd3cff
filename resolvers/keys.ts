import type { ApiKeyConnectionResolvers, ApiKeyResolvers, AppResolvers, Resolvers } from '../src/generated/graphql';
import type { RequestContext } from '../src/services/context';
import type { AppDoc } from '../src/data/apps-repo';
import type { ApiKeyDoc } from '../src/data/api-keys-repo';
import type { ApiKeyConnectionPage } from '../src/services/pages';
import { createApiKey, keysConnection, listApiKeys, revokeApiKey } from '../src/services/keys-service';
import { connectionFields, type MappedResolvers } from './views';

/** The App's API keys: the plain list and the connection. */
export const appKeyFields: Required<Pick<AppResolvers<RequestContext, AppDoc>, 'apiKeys' | 'keys'>> = {
  apiKeys: (a, _args, ctx) => listApiKeys(ctx, a._id),
  keys: (a, args, ctx) => keysConnection(ctx, a, args),
};

/** secretHash has no field: a key's secret (or anything derived from it) is never returned after its creation. */
const apiKey: MappedResolvers<ApiKeyResolvers, ApiKeyDoc> = {
  id: (k) => k._id,
  releaseBuilds: (k) => k.releaseBuilds ?? false,
};

const apiKeyConnection: MappedResolvers<ApiKeyConnectionResolvers, ApiKeyConnectionPage> = connectionFields<ApiKeyDoc>();

export const keyResolvers: Resolvers = {
  Mutation: {
    createApiKey: async (_p, { input }, ctx) => {
      const created = await createApiKey(ctx, { ...input, mode: input.mode ?? 'live' });
      return { apiKey: created.doc, key: created.key };
    },
    revokeApiKey: (_p, { id }, ctx) => revokeApiKey(ctx, id),
  },
  ApiKey: apiKey,
  ApiKeyConnection: apiKeyConnection,
};
