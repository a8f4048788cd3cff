import type { Handler } from '../handler';
import { execute } from '../support/execute';
import { pathParams } from '../support/request';
import { CreateWebhookDocument, DeleteWebhookDocument, WebhooksDocument, type CreateWebhookInput } from '../../src/generated/rest-operations';

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
  const { createWebhook } = await execute(ctx, CreateWebhookDocument, { appId: pathParams(req).id, input });
  res.setHeader('Cache-Control', 'no-store'); // carries the signing secret
  res.status(201).json({ ...createWebhook.webhook, secret: createWebhook.secret });
};

export const listWebhooks: Handler = async (req, res, ctx) => {
  const { webhooks } = await execute(ctx, WebhooksDocument, { appId: pathParams(req).id });
  res.status(200).json({ data: webhooks });
};

export const deleteWebhook: Handler = async (req, res, ctx) => {
  const params = pathParams(req);
  await execute(ctx, DeleteWebhookDocument, { appId: params.id, webhookId: params.webhookId });
  res.status(204).end();
};
