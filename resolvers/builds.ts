import type { Resolvers } from '../src/generated/graphql';
import { createBuild, createUploadUrl, getBuild, listBuilds, scansOfBuild, toBuildView } from '../src/services/builds-service';

export const buildResolvers: Resolvers = {
  Query: {
    build: async (_p, { id }, ctx) => {
      const build = await getBuild(ctx, id);
      return build ? toBuildView(ctx, build) : null;
    },
    builds: async (_p, { appId, limit }, ctx) => Promise.all((await listBuilds(ctx, appId, limit ?? 25)).map((b) => toBuildView(ctx, b))),
  },
  Mutation: {
    createBuild: async (_p, { input }, ctx) => toBuildView(ctx, await createBuild(ctx, input)),
    createUploadUrl: async (_p, { buildId }, ctx) => toBuildView(ctx, await createUploadUrl(ctx, buildId)),
  },
  Build: {
    scans: (build, _a, ctx) => scansOfBuild(ctx, { id: build.id!, appId: build.appId! }),
  },
};
