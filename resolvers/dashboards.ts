import type { Resolvers } from '../src/generated/graphql';
import type { BuildDoc } from '../src/data/builds-repo';
import { toBuildView } from '../src/services/builds-service';
import { buildTrend, latestGradeDistribution, refusedExchanges, threatBreakdown, threatTrend, type DateRange } from '../src/services/dashboards-service';

const asDate = (value: Date | string) => (value instanceof Date ? value : new Date(value));
const toRange = (range: { from: Date | string; to: Date | string }): DateRange => ({ from: asDate(range.from), to: asDate(range.to) });

/**
 * The build of each breakdown row, read for the whole page at once by the service, handed from App.threatBreakdown
 * to ThreatBreakdownRow.build by row object (a row lives for one request; the map never keeps it).
 */
const buildOfRow = new WeakMap<object, BuildDoc>();

/** The dashboards' aggregates: on an app, and across apps (staff). */
export const dashboardResolvers: Resolvers = {
  App: {
    threatTrend: (app, args, ctx) =>
      threatTrend(ctx, { appId: app.id!, range: toRange(args.range), platform: args.platform, appVersion: args.appVersion, buildId: args.buildId }),
    threatBreakdown: async (app, args, ctx) => {
      const rows = await threatBreakdown(ctx, { appId: app.id!, range: toRange(args.range), by: args.by, first: args.first });
      return rows.map(({ build, ...row }) => {
        if (build) buildOfRow.set(row, build);
        return row;
      });
    },
    buildTrend: (app, args, ctx) => buildTrend(ctx, { appId: app.id!, range: toRange(args.range) }),
    refusedExchanges: (app, args, ctx) => refusedExchanges(ctx, { appId: app.id!, range: toRange(args.range) }),
  },
  ThreatBreakdownRow: {
    build: (row, _a, ctx) => {
      const build = buildOfRow.get(row);
      return build ? toBuildView(ctx, build) : null;
    },
  },
  Query: {
    latestGradeDistribution: (_p, _a, ctx) => latestGradeDistribution(ctx),
    refusedExchanges: (_p, args, ctx) => refusedExchanges(ctx, { appId: null, range: toRange(args.range) }),
  },
};
