import { randomBytes } from 'node:crypto';
import type { Deps } from '../core/deps';
import { SweepLeasesRepo } from '../data/sweep-leases-repo';

export interface SweepSpec {
  /** Names the sweep's lease: one instance among all runs it per period. */
  name: string;
  /** How often it runs (across all instances together). */
  periodMs: number;
  /** One run: removes what is due, in bounded batches, and returns how many documents went. */
  run(now: Date): Promise<number>;
}

export interface PeriodicSweep {
  /** Runs once now if this instance wins the period's lease; the count removed, or null when another instance has it. */
  runOnce(): Promise<number | null>;
  start(): void;
  stop(): Promise<void>;
}

/**
 * A periodic sweep shared safely between instances (retention of audit entries, threats: FerretDB has no TTL
 * index). Every instance ticks every `periodMs`; whoever claims the lease for the period runs the sweep, the others
 * skip. The lease lasts the period, so the sweep runs about once per period in all, and a crashed runner delays the
 * next run by at most one period.
 */
export function createPeriodicSweep(deps: Deps, spec: SweepSpec): PeriodicSweep {
  const leases = new SweepLeasesRepo(deps.db);
  const holder = randomBytes(8).toString('hex');
  const logger = deps.logger.child({ component: 'sweep', sweep: spec.name });
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();

  const runOnce = async (): Promise<number | null> => {
    const now = deps.clock.now();
    if (!(await leases.claim(spec.name, holder, now, spec.periodMs))) return null;
    const removed = await spec.run(now);
    if (removed > 0) logger.info({ removed }, 'sweep removed expired documents');
    return removed;
  };

  return {
    runOnce,
    start() {
      const tick = () => {
        running = runOnce().catch((err) => logger.warn({ err }, 'sweep failed; the next period retries'));
      };
      tick();
      timer = setInterval(tick, spec.periodMs);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

/**
 * Removes documents in batches of `batch` until a batch comes back short or `maxBatches` ran: one run never holds the
 * database for long, and what is left waits for the next period.
 */
export async function removeInBatches(removeBatch: (batch: number) => Promise<number>, batch: number, maxBatches: number): Promise<number> {
  let total = 0;
  for (let i = 0; i < maxBatches; i++) {
    const removed = await removeBatch(batch);
    total += removed;
    if (removed < batch) break;
  }
  return total;
}
