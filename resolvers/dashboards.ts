import type { AppResolvers, Resolvers } from '../src/generated/graphql';
import { attestVerdicts, buildTrend, latestGradeDistribution, refusedExchanges, threatBreakdown, threatTrend, type DateRange } from '../src/services/dashboards-service';

const asDate = (value: Date | string) => (value instanceof Date ? value : new Date(value));
const toRange = (range: { from: Date | string; to: Date | string }): DateRange => ({ from: asDate(range.from), to: asDate(range.to) });

/** The dashboards' aggregates of one app: spread into the App resolvers (resolvers/apps.ts), whose parent is the stored app. */
export const appDashboardFields: Required<Pick<AppResolvers, 'threatTrend' | 'threatBreakdown' | 'buildTrend' | 'refusedExchanges' | 'attestVerdicts'>> = {
  threatTrend: (app, args, ctx) =>
    threatTrend(ctx, { appId: app._id, range: toRange(args.range), platform: args.platform, appVersion: args.appVersion, buildId: args.buildId }),
  // Each row carries its build document (read for the whole page at once by the service); Build's resolvers map it.
  threatBreakdown: (app, args, ctx) => threatBreakdown(ctx, { appId: app._id, range: toRange(args.range), by: args.by, first: args.first }),
  buildTrend: (app, args, ctx) => buildTrend(ctx, { appId: app._id, range: toRange(args.range) }),
  refusedExchanges: (app, args, ctx) => refusedExchanges(ctx, { appId: app._id, range: toRange(args.range) }),
  attestVerdicts: (app, args, ctx) => attestVerdicts(ctx, { appId: app._id, range: toRange(args.range) }),
};

/** The dashboards' aggregates across apps (staff). */
export const dashboardResolvers: Resolvers = {
  Query: {
    latestGradeDistribution: (_p, _a, ctx) => latestGradeDistribution(ctx),
    refusedExchanges: (_p, args, ctx) => refusedExchanges(ctx, { appId: null, range: toRange(args.range) }),
  },
};
