import type { RequestContext } from './context';
import { appAccess } from '../auth/authorize';
import { MAX_WEBHOOKS_PER_APP, WEBHOOK_EVENTS, type WebhookDoc, type WebhookEvent } from '../data/webhooks-repo';
import type { WebhookDeliveryDoc } from '../data/webhook-deliveries-repo';
import { notFound, validationFailed } from '../core/errors';
import type { FieldError } from '../core/errors';
import { newId } from '../core/ids';
import { newWebhookSecret, secretBytes } from '../webhooks/signature';
import { sealSecret } from '../crypto/secret-box';
import { GRADE_BANDS } from '../scan/score';
import { actorOf, recordAudit } from './audit-service';

export interface WebhookInput {
  url: string;
  events: string[];
  minVerdict?: 'clean' | 'suspicious' | 'compromised' | null;
  spikeThreshold?: number | null;
  gradeBelow?: string | null;
  secret?: string | null;
}

export const DEFAULT_MIN_VERDICT = 'compromised';
export const DEFAULT_SPIKE_THRESHOLD = 100;
export const DEFAULT_GRADE_BELOW = 'C';


/** https, or http://127.0.0.1 when the loopback test flag is on; no credentials in the URL. */
function urlErrors(raw: string, allowLoopback: boolean): FieldError[] {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return [{ pointer: '/url', message: 'must be an absolute URL' }];
  }
  if (url.username || url.password) return [{ pointer: '/url', message: 'must not carry credentials' }];
  if (url.protocol === 'https:') return [];
  if (url.protocol === 'http:' && allowLoopback && url.hostname === '127.0.0.1') return [];
  return [{ pointer: '/url', message: 'must use https' }];
}

function inputErrors(ctx: RequestContext, input: WebhookInput): FieldError[] {
  const errors = urlErrors(input.url, ctx.deps.config.webhookAllowInsecureLoopback);
  input.events.forEach((event, i) => {
    if (!(WEBHOOK_EVENTS as readonly string[]).includes(event)) errors.push({ pointer: `/events/${i}`, message: `must be one of ${WEBHOOK_EVENTS.join(', ')}` });
  });
  if (input.gradeBelow != null && !GRADE_BANDS.some((b) => b.grade === input.gradeBelow)) errors.push({ pointer: '/gradeBelow', message: 'must be a grade' });
  if (input.secret != null && !secretBytes(input.secret)) errors.push({ pointer: '/secret', message: 'must be whsec_ followed by the base64 of 24 to 64 bytes' });
  return errors;
}

/**
 * Creates a webhook (rules:write, or admin staff); the secret is returned here and never again. Audited as
 * webhook.created with the URL's host only: its path or query may carry the receiver's token.
 */
export async function createWebhook(ctx: RequestContext, appId: string, input: WebhookInput): Promise<{ webhook: WebhookDoc; secret: string }> {
  await appAccess(ctx, 'rules:write', appId, { write: true });
  const errors = inputErrors(ctx, input);
  if (errors.length) throw validationFailed(errors, 'The webhook is not allowed.');
  const secret = input.secret ?? newWebhookSecret();
  const id = newId('whk');
  const doc = await ctx.repos.webhooks.insertIfRoom({
    _id: id,
    appId,
    url: input.url,
    events: [...new Set(input.events)] as WebhookEvent[],
    minVerdict: input.minVerdict ?? DEFAULT_MIN_VERDICT,
    spikeThreshold: input.spikeThreshold ?? DEFAULT_SPIKE_THRESHOLD,
    gradeBelow: input.gradeBelow ?? DEFAULT_GRADE_BELOW,
    secret: sealSecret(secret, ctx.deps.config.keyEncryptionKey, id),
    createdAt: ctx.clock.now(),
  });
  if (!doc) throw validationFailed([{ pointer: '', message: `an app has at most ${MAX_WEBHOOKS_PER_APP} webhooks` }], 'The app has too many webhooks.');
  ctx.deps.instance.webhooks.forget(appId);
  ctx.logger.info({ appId, webhookId: id }, 'webhook created');
  await recordAudit(ctx, { appId, action: 'webhook.created', subject: id, actor: actorOf(ctx), details: { webhookId: id, host: new URL(doc.url).host, events: doc.events.join(' ') } });
  return { webhook: doc, secret };
}

/** The app's webhooks, oldest first, each with its newest deliveries (rules:read, or staff). */
export async function listWebhooks(ctx: RequestContext, appId: string): Promise<{ webhook: WebhookDoc; deliveries: WebhookDeliveryDoc[] }[]> {
  await appAccess(ctx, 'rules:read', appId, { write: false });
  const webhooks = await ctx.repos.webhooks.listForApp(appId);
  return Promise.all(webhooks.map(async (webhook) => ({ webhook, deliveries: await ctx.repos.webhookDeliveries.recentForWebhook(appId, webhook._id) })));
}

/** Deletes a webhook and its queued deliveries; audited as webhook.deleted. */
export async function deleteWebhook(ctx: RequestContext, appId: string, webhookId: string): Promise<void> {
  await appAccess(ctx, 'rules:write', appId, { write: true });
  const deleted = await ctx.repos.webhooks.deleteForApp(appId, webhookId);
  if (!deleted) throw notFound('Webhook');
  ctx.deps.instance.webhooks.forget(appId);
  await ctx.repos.webhookDeliveries.deleteForWebhook(appId, webhookId);
  await recordAudit(ctx, { appId, action: 'webhook.deleted', subject: webhookId, actor: actorOf(ctx), details: { webhookId, host: new URL(deleted.url).host } });
}
