import type { RestHandler } from '../handler';
import { execute } from '../support/execute';
import { CreateWebhookDocument, DeleteWebhookDocument, WebhooksDocument, type CreateWebhookInput, type WebhookFieldsFragment } from '../../src/generated/rest-operations';
import type { components } from '../../src/generated/openapi';
import { contractMember, contractValue, contractValues } from '../support/contract-values';

type RestWebhook = components['schemas']['Webhook'];

/** GraphQL's String events and delivery states -> the contract's enums. */
function toRest(webhook: WebhookFieldsFragment): RestWebhook {
  return {
    ...webhook,
    events: contractValues('WebhookEvent', webhook.events),
    deliveries: webhook.deliveries.map((d) => ({ ...d, type: contractValue('WebhookEvent', d.type), status: contractMember('WebhookDelivery', 'status', d.status) })),
  };
}

export const createWebhook: RestHandler<'createWebhook'> = async (call, ctx) => {
  const body = call.body;
  const input: CreateWebhookInput = {
    url: body.url,
    events: body.events,
    minVerdict: body.minVerdict ?? null,
    spikeThreshold: body.spikeThreshold ?? null,
    gradeBelow: body.gradeBelow ?? null,
    secret: body.secret ?? null,
  };
  const { createWebhook } = await execute(ctx, CreateWebhookDocument, { appId: call.params.id, input });
  call.res.setHeader('Cache-Control', 'no-store'); // carries the signing secret
  call.answer(201, { ...toRest(createWebhook.webhook), secret: createWebhook.secret });
};

export const listWebhooks: RestHandler<'listWebhooks'> = async (call, ctx) => {
  const { webhooks } = await execute(ctx, WebhooksDocument, { appId: call.params.id });
  call.answer(200, { data: webhooks.map(toRest) });
};

export const deleteWebhook: RestHandler<'deleteWebhook'> = async (call, ctx) => {
  await execute(ctx, DeleteWebhookDocument, { appId: call.params.id, webhookId: call.params.webhookId });
  call.res.status(204).end();
};
