import type { Resolvers } from '../src/generated/graphql';
import { createAppAsStaff, getApp, listApps } from '../src/services/apps-service';
import { listApiKeys } from '../src/services/keys-service';
import { toApiKey, toApp } from './views';

export const appResolvers: Resolvers = {
  Query: {
    app: async (_p, { id }, ctx) => {
      const app = await getApp(ctx, id);
      return app ? toApp(app) : null;
    },
    apps: async (_p, { limit }, ctx) => (await listApps(ctx, limit ?? 50)).map(toApp),
  },
  Mutation: {
    createApp: async (_p, { input }, ctx) => toApp(await createAppAsStaff(ctx, input)),
  },
  App: {
    apiKeys: async (app, _a, ctx) => (await listApiKeys(ctx, app.id!)).map(toApiKey),
  },
};
