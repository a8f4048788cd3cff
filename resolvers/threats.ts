import type { Resolvers } from '../src/generated/graphql';
import type { ThreatDoc } from '../src/data/threats-repo';
import { listThreats, threatStats } from '../src/services/threats-service';
import { ingestEvents } from '../src/services/events-service';

const asDate = (value: Date | string) => (value instanceof Date ? value : new Date(value));
const asOptionalDate = (value: Date | string | null | undefined) => (value == null ? null : asDate(value));

/** Document -> GraphQL Threat. The device hash and the merge bookkeeping stay behind, on purpose. */
export const toThreat = (doc: ThreatDoc) => ({
  id: doc._id,
  appId: doc.appId,
  detection: doc.detection,
  verdict: doc.verdict,
  confidence: doc.confidence,
  action: doc.action,
  signals: doc.signals,
  platform: doc.platform,
  appVersion: doc.appVersion,
  buildId: doc.buildId,
  occurredAt: doc.occurredAt,
  lastOccurredAt: doc.lastOccurredAt,
  count: doc.count,
});

export const threatResolvers: Resolvers = {
  Query: {
    threats: async (_p, args, ctx) => {
      const filter = args.filter ? { ...args.filter, from: asOptionalDate(args.filter.from), to: asOptionalDate(args.filter.to) } : null;
      const page = await listThreats(ctx, { appId: args.appId, filter, limit: args.limit, cursor: args.cursor });
      return { ...page, data: page.data.map(toThreat) };
    },
    threatStats: (_p, args, ctx) => threatStats(ctx, { appId: args.appId, from: asDate(args.from), to: asDate(args.to) }),
  },
  Mutation: {
    ingestEvents: (_p, { events }, ctx) => ingestEvents(ctx, events.map((e) => ({ ...e, occurredAt: asDate(e.occurredAt) }))),
  },
};
