import type { Handler } from '../handler';
import { execute, gqlDocument } from '../execute';
import { pathParams } from '../request';
import type { CreateWebhookInput, CreatedWebhook, MutationCreateWebhookArgs, MutationDeleteWebhookArgs, QueryWebhooksArgs, Webhook } from '../../src/generated/graphql';

const WEBHOOK_FIELDS = 'id appId url events minVerdict spikeThreshold gradeBelow createdAt deliveries { id type status attempts nextAttemptAt lastResponseStatus createdAt }';

const CREATE = gqlDocument<{ createWebhook: CreatedWebhook }, MutationCreateWebhookArgs>(
  `mutation CreateWebhook($appId: ID!, $input: CreateWebhookInput!) { createWebhook(appId: $appId, input: $input) { secret webhook { ${WEBHOOK_FIELDS} } } }`,
);

const LIST = gqlDocument<{ webhooks: Webhook[] }, QueryWebhooksArgs>(`query Webhooks($appId: ID!) { webhooks(appId: $appId) { ${WEBHOOK_FIELDS} } }`);

const DELETE = gqlDocument<{ deleteWebhook: boolean }, MutationDeleteWebhookArgs>(
  `mutation DeleteWebhook($appId: ID!, $webhookId: ID!) { deleteWebhook(appId: $appId, webhookId: $webhookId) }`,
);

export const createWebhook: Handler = async (req, res, ctx) => {
  const body = req.body as CreateWebhookInput;
  const input: CreateWebhookInput = {
    url: body.url,
    events: body.events,
    minVerdict: body.minVerdict ?? null,
    spikeThreshold: body.spikeThreshold ?? null,
    gradeBelow: body.gradeBelow ?? null,
    secret: body.secret ?? null,
  };
  const { createWebhook } = await execute(ctx, CREATE, { appId: pathParams(req).id, input });
  res.setHeader('Cache-Control', 'no-store'); // carries the signing secret
  res.status(201).json({ ...createWebhook.webhook, secret: createWebhook.secret });
};

export const listWebhooks: Handler = async (req, res, ctx) => {
  const { webhooks } = await execute(ctx, LIST, { appId: pathParams(req).id });
  res.status(200).json({ data: webhooks });
};

export const deleteWebhook: Handler = async (req, res, ctx) => {
  const params = pathParams(req);
  await execute(ctx, DELETE, { appId: params.id, webhookId: params.webhookId });
  res.status(204).end();
};
