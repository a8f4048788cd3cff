import type { Repositories } from '../data/repositories';
import type { WebhookDoc } from '../data/webhooks-repo';

/**
 * How long this instance remembers an app's webhooks: ingestion asks on every batch, and most apps have none. A change
 * on this instance forgets the app at once; on another, it is seen within CACHE_MS (a delivery queued for a webhook
 * deleted meanwhile is dropped by the worker, which reads the webhook before sending).
 */
const CACHE_MS = 5_000;
/** Apps remembered at most: a process serving many apps rereads now and then instead of growing without bound. */
const MAX_APPS = 10_000;

/** The webhooks of an app, remembered for a few seconds by this instance (Deps.instance.webhooks). */
export class WebhookCache {
  private readonly apps = new Map<string, { until: number; webhooks: WebhookDoc[] }>();

  async of(repos: Repositories, appId: string): Promise<WebhookDoc[]> {
    // Real time, not the service clock: this only paces reads, nothing expires by it.
    const now = performance.now();
    const hit = this.apps.get(appId);
    if (hit && hit.until > now) return hit.webhooks;
    const webhooks = await repos.webhooks.listForApp(appId);
    if (this.apps.size > MAX_APPS) this.apps.clear();
    this.apps.set(appId, { until: now + CACHE_MS, webhooks });
    return webhooks;
  }

  /** After a webhook of the app is created or deleted on this instance. */
  forget(appId: string): void {
    this.apps.delete(appId);
  }
}
