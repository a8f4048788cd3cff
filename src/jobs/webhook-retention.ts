import type { Deps } from '../core/deps';
import { createPeriodicSweep, removeInBatches, type PeriodicSweep } from './periodic-sweep';

/** Deliveries stay visible this long after they were queued (they settle within 24 h). */
export const DELIVERY_RETENTION_MS = 30 * 86_400_000;
const PERIOD_MS = 3600_000;
const BATCH = 500;
const MAX_BATCHES_PER_RUN = 40;

/** Removes old webhook deliveries and spent spike counters (FerretDB has no TTL index to do it). */
export function createWebhookRetention(deps: Deps, options: { periodMs?: number } = {}): PeriodicSweep {
  return createPeriodicSweep(deps, {
    name: 'webhook-retention',
    periodMs: options.periodMs ?? PERIOD_MS,
    run: async (now) => {
      const cutoff = new Date(now.getTime() - DELIVERY_RETENTION_MS);
      const deliveries = await removeInBatches((n) => deps.repos.webhookDeliveries.deleteOlderThan(cutoff, n), BATCH, MAX_BATCHES_PER_RUN);
      const counters = await removeInBatches((n) => deps.repos.webhookSpikes.deleteExpired(now, n), BATCH, MAX_BATCHES_PER_RUN);
      return deliveries + counters;
    },
  });
}
