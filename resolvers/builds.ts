import type { AppResolvers, BuildConnectionResolvers, BuildResolvers, Resolvers } from '../src/generated/graphql';
import type { RequestContext } from '../src/services/context';
import type { AppDoc } from '../src/data/apps-repo';
import type { BuildDoc } from '../src/data/builds-repo';
import type { BuildConnectionPage } from '../src/services/pages';
import { buildsConnection, createBuild, createUploadUrl, getBuild, latestBuild, listBuilds, toArtifactView } from '../src/services/builds-service';
import { appOf, asOptionalDate, connectionFields, type MappedResolvers } from './views';

/** The App's builds: its connection and its newest build. */
export const appBuildFields: Required<Pick<AppResolvers<RequestContext, AppDoc>, 'builds' | 'latestBuild'>> = {
  builds: (a, { first, after, filter }, ctx) =>
    buildsConnection(ctx, a, { first, after, filter: filter && { ...filter, from: asOptionalDate(filter.from), to: asOptionalDate(filter.to) } }),
  latestBuild: (a, { platform }, ctx) => latestBuild(ctx, a, platform ?? null),
};

const key = (b: BuildDoc) => ({ appId: b.appId, buildId: b._id });

const build: MappedResolvers<BuildResolvers, BuildDoc> = {
  id: (b) => b._id,
  artifact: (b, _a, ctx) => toArtifactView(ctx, b),
  provenance: (b) => (b.provenance ? { ...b.provenance, provider: b.provenance.provider ?? 'github' } : null), // GitHub's before providers
  release: (b) => b.release === true,
  scans: async (b, _a, ctx) => (await ctx.loaders.scansOfBuild.load(key(b))).map((s) => ({ id: s._id, engine: s.engine, grade: s.grade, score: s.score })),
  // The parent build was authorized, and its app is the caller's own (app credentials) or any (staff).
  app: (b, _a, ctx) => appOf(ctx, b.appId),
  latestStaticScan: (b, _a, ctx) => ctx.loaders.latestStaticScan.load(key(b)),
  // Stored on the build when its static scan is written; builds scanned before that read it from the scan.
  grade: async (b, _a, ctx) => b.grade ?? (await ctx.loaders.latestStaticScan.load(key(b)))?.grade ?? null,
};

const buildConnection: MappedResolvers<BuildConnectionResolvers, BuildConnectionPage> = connectionFields<BuildDoc>();

export const buildResolvers: Resolvers = {
  Query: {
    build: (_p, { id }, ctx) => getBuild(ctx, id),
    builds: (_p, { appId, limit }, ctx) => listBuilds(ctx, appId, limit ?? 25),
  },
  Mutation: {
    createBuild: (_p, { input }, ctx) => createBuild(ctx, input),
    createUploadUrl: (_p, { buildId }, ctx) => createUploadUrl(ctx, buildId),
  },
  Build: build,
  BuildConnection: buildConnection,
};
