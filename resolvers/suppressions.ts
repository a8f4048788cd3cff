import type { AppResolvers, Resolvers, Suppression, SuppressionConnection } from '../src/generated/graphql';
import type { RequestContext } from '../src/services/context';
import type { AppDoc } from '../src/data/apps-repo';
import type { SuppressionDoc } from '../src/data/suppressions-repo';
import { createSuppression, deleteSuppression, suppressionsConnection, suppressionStatus } from '../src/services/suppressions-service';
import { asDate, connectionFields } from './views';

/** Document -> GraphQL object; the slot stays inside. The status is of the request's time. */
const toSuppression = (doc: SuppressionDoc, now: Date): Suppression => ({
  id: doc._id,
  appId: doc.appId,
  findingId: doc.findingId,
  fingerprint: doc.fingerprint,
  reason: doc.reason,
  expiresAt: doc.expiresAt,
  status: suppressionStatus(doc, now),
  createdBy: doc.createdBy,
  createdAt: doc.createdAt,
});

export const appSuppressionFields: Required<Pick<AppResolvers<RequestContext, AppDoc>, 'suppressions'>> = {
  suppressions: async (a, args, ctx): Promise<SuppressionConnection> => {
    const page = await suppressionsConnection(ctx, a._id, args);
    const now = ctx.clock.now();
    const fields = connectionFields<SuppressionDoc>();
    return {
      edges: fields.edges(page).map((e) => ({ cursor: e.cursor, node: toSuppression(e.node, now) })),
      nodes: page.items.map((d) => toSuppression(d, now)),
      pageInfo: fields.pageInfo(page),
      totalCount: await page.totalCount(),
    };
  },
};

export const suppressionResolvers: Resolvers = {
  Mutation: {
    createSuppression: async (_p, { appId, input }, ctx) =>
      toSuppression(await createSuppression(ctx, appId, { ...input, expiresAt: asDate(input.expiresAt) }), ctx.clock.now()),
    deleteSuppression: async (_p, { appId, suppressionId }, ctx) => {
      await deleteSuppression(ctx, appId, suppressionId);
      return true;
    },
  },
};
