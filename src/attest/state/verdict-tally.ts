import type { Logger } from '../../core/logger';
import { verdictCountId, type AttestVerdictCountsRepo, type AttestVerdictCountRow } from '../../data/attest-verdict-counts-repo';

/** How long a verdict waits in memory before it is added to the dashboard's counts. */
const FLUSH_AFTER_MS = 1_000;
/** Rows held at most: beyond, the next verdict flushes at once (distinct apps x engines x reasons in one second). */
const MAX_ROWS = 1_000;

/**
 * The verdicts this instance gave, counted in memory and added to attest_verdict_counts a second later, in one
 * command (Deps.instance.verdictTally): an awaited upsert per verification was its slowest database command. A
 * process that dies loses at most its last second of counts, which only the dashboard reads; a process that stops
 * flushes them (closeDeps), and the dashboard flushes this instance's before it reads, so what one instance just
 * verified is on its dashboard.
 */
export class VerdictTally {
  private pending = new Map<string, AttestVerdictCountRow>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly repo: AttestVerdictCountsRepo,
    private readonly logger: Logger,
  ) {}

  /** Counts one verdict; never waits on the database. */
  add(row: Omit<AttestVerdictCountRow, 'count'>): void {
    // One row per UTC day: the day goes in the key, any instant of it in `at`.
    const key = verdictCountId(row);
    const held = this.pending.get(key);
    if (held) held.count += 1;
    else this.pending.set(key, { ...row, count: 1 });
    if (this.pending.size >= MAX_ROWS) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), FLUSH_AFTER_MS).unref();
  }

  /** Adds what is held to the database; resolves when it (and any flush before it) is written. Never throws. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const rows = [...this.pending.values()];
    this.pending = new Map();
    // Flushes follow one another, so a caller that awaits one also waits for what an earlier one is writing.
    this.flushing = this.flushing.then(async () => {
      if (rows.length === 0) return;
      try {
        await this.repo.add(rows);
      } catch (err) {
        this.logger.warn({ err, rows: rows.length }, 'attestation verdict counts not written; the dashboard misses them');
      }
    });
    return this.flushing;
  }
}
