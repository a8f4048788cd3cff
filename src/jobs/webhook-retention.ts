import type { Deps } from '../core/deps';
import { createPeriodicSweep, type PeriodicSweep } from './periodic-sweep';

/** Deliveries stay visible this long after they were queued (they settle within 24 h). */
export const DELIVERY_RETENTION_MS = 30 * 86_400_000;
const PERIOD_MS = 3600_000;
const BATCH = 1_000;

/**
 * Removes batches until one comes back short: one app alone can queue 36k deliveries an hour (60 threat.opened per
 * webhook and minute, 10 webhooks), so a run capped at a number of batches falls behind for good. Each batch is one
 * short indexed read and delete; the run stops early only past `budgetMs` (half its period, so runs never overlap)
 * and the next period goes on from there.
 */
export async function removeUntilDone(removeBatch: (batch: number) => Promise<number>, batch: number, budgetMs: number): Promise<number> {
  const started = performance.now();
  let total = 0;
  for (;;) {
    const removed = await removeBatch(batch);
    total += removed;
    if (removed < batch || performance.now() - started > budgetMs) return total;
  }
}

/** Removes old webhook deliveries and spent spike counters (FerretDB has no TTL index to do it). */
export function createWebhookRetention(deps: Deps, options: { periodMs?: number; batch?: number } = {}): PeriodicSweep {
  const periodMs = options.periodMs ?? PERIOD_MS;
  const batch = options.batch ?? BATCH;
  return createPeriodicSweep(deps, {
    name: 'webhook-retention',
    periodMs,
    run: async (now) => {
      const cutoff = new Date(now.getTime() - DELIVERY_RETENTION_MS);
      const deliveries = await removeUntilDone((n) => deps.repos.webhookDeliveries.deleteOlderThan(cutoff, n), batch, periodMs / 2);
      const counters = await removeUntilDone((n) => deps.repos.webhookSpikes.deleteExpired(now, n), batch, periodMs / 2);
      return deliveries + counters;
    },
  });
}
