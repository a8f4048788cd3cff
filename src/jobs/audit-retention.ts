import type { Deps } from '../core/deps';
import { createPeriodicSweep, removeInBatches, type PeriodicSweep } from './periodic-sweep';

const DAY_MS = 86_400_000;
/** Hourly: entries outlive their retention by an hour at most. */
const PERIOD_MS = 3600_000;
const BATCH = 500;
const MAX_BATCHES_PER_RUN = 40;

/** Removes audit entries older than AUDIT_RETENTION_DAYS (docs/contract.md, "Retention"). */
export function createAuditRetention(deps: Deps, options: { periodMs?: number; batch?: number; maxBatches?: number } = {}): PeriodicSweep {
  const batch = options.batch ?? BATCH;
  return createPeriodicSweep(deps, {
    name: 'audit-retention',
    periodMs: options.periodMs ?? PERIOD_MS,
    run: (now) => {
      const cutoff = new Date(now.getTime() - deps.config.auditRetentionDays * DAY_MS);
      return removeInBatches((n) => deps.repos.audit.deleteOlderThan(cutoff, n), batch, options.maxBatches ?? MAX_BATCHES_PER_RUN);
    },
  });
}
