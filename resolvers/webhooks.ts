import type { Resolvers } from '../src/generated/graphql';
import type { WebhookDoc } from '../src/data/webhooks-repo';
import type { WebhookDeliveryDoc } from '../src/data/webhook-deliveries-repo';
import { createWebhook, deleteWebhook, listWebhooks } from '../src/services/webhooks-service';

const toDelivery = (d: WebhookDeliveryDoc) => ({
  id: d._id,
  type: d.type,
  status: d.status,
  attempts: d.attempts,
  nextAttemptAt: d.status === 'pending' ? d.nextAttemptAt : null,
  lastResponseStatus: d.lastResponseStatus,
  createdAt: d.createdAt,
});

/** Document -> GraphQL object; the sealed secret and the slot stay inside. */
const toWebhook = (doc: WebhookDoc, deliveries: WebhookDeliveryDoc[]) => ({
  id: doc._id,
  appId: doc.appId,
  url: doc.url,
  events: doc.events,
  minVerdict: doc.minVerdict,
  spikeThreshold: doc.spikeThreshold,
  gradeBelow: doc.gradeBelow,
  createdAt: doc.createdAt,
  deliveries: deliveries.map(toDelivery),
  droppedDeliveries: doc.droppedDeliveries ?? 0,
  lastDroppedAt: doc.lastDroppedAt ?? null,
});

export const webhookResolvers: Resolvers = {
  Query: {
    webhooks: async (_p, { appId }, ctx) => (await listWebhooks(ctx, appId)).map((w) => toWebhook(w.webhook, w.deliveries)),
  },
  Mutation: {
    createWebhook: async (_p, { appId, input }, ctx) => {
      const created = await createWebhook(ctx, appId, input);
      return { webhook: toWebhook(created.webhook, []), secret: created.secret };
    },
    deleteWebhook: async (_p, { appId, webhookId }, ctx) => {
      await deleteWebhook(ctx, appId, webhookId);
      return true;
    },
  },
};
