import type { AppResolvers, Resolvers, ThreatConnectionResolvers, ThreatResolvers } from '../src/generated/graphql';
import type { RequestContext } from '../src/services/context';
import type { AppDoc } from '../src/data/apps-repo';
import type { ThreatDoc } from '../src/data/threats-repo';
import type { ThreatConnectionPage } from '../src/services/pages';
import { threatStats, threatsConnection } from '../src/services/threats-service';
import { appOf, asDate, asOptionalDate, buildOfApp, connectionFields, type MappedResolvers } from './views';

/** The App's security events. */
export const appThreatFields: Required<Pick<AppResolvers<RequestContext, AppDoc>, 'threats'>> = {
  threats: (a, { first, after, filter }, ctx) =>
    threatsConnection(ctx, a, { first, after, filter: filter && { ...filter, from: asOptionalDate(filter.from), to: asOptionalDate(filter.to) } }),
};

/** The device hash and the merge bookkeeping have no field: they stay behind, on purpose. */
const threat: MappedResolvers<ThreatResolvers, ThreatDoc> = {
  id: (t) => t._id,
  app: (t, _a, ctx) => appOf(ctx, t.appId),
  build: (t, _a, ctx) => buildOfApp(ctx, t.appId, t.buildId),
  attested: (t) => t.attested ?? false,
  attestedBuildId: (t) => t.attestedBuildId ?? null,
  attestedBuild: (t, _a, ctx) => buildOfApp(ctx, t.appId, t.attestedBuildId ?? null),
};

const threatConnection: MappedResolvers<ThreatConnectionResolvers, ThreatConnectionPage> = connectionFields<ThreatDoc>();

export const threatResolvers: Resolvers = {
  Query: {
    threatStats: (_p, args, ctx) => threatStats(ctx, { appId: args.appId, from: asDate(args.from), to: asDate(args.to) }),
  },
  Threat: threat,
  ThreatConnection: threatConnection,
};
