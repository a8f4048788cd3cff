import type { Clock } from '../core/clock';
import type { Logger } from '../core/logger';
import type { ScanJobDoc, ScanJobsRepo } from '../data/scan-jobs-repo';
import { metrics } from '../metrics/registry';

/** Scan job metrics: one outcome per attempt, timed on the wall clock (the service clock may be a test's). */
function recordAttempt(outcome: 'done' | 'retry' | 'failed', startedAt: bigint = process.hrtime.bigint()): void {
  metrics.scanJobs.inc({ outcome });
  metrics.scanJobDuration.observe({ outcome }, Number(process.hrtime.bigint() - startedAt) / 1e9);
}

/** What a kind of job does; `run` throws to ask for a retry, `giveUp` records the final failure for the client. */
export interface JobHandler {
  /**
   * `stopping` is aborted when the runner stops: start nothing that a kill at the stop timeout would interrupt.
   * 'deferred': the handler put the job back in the queue itself (ScanJobsRepo.defer), an attempt not counted.
   * 'handed-back': the runner is stopping and the job's work never started: the runner puts it back for another
   * instance at once, an attempt not counted (ScanJobsRepo.handBack).
   * `released` may be called once the job no longer needs its lane (its analysis ended): the lane then claims the
   * next job while this one writes its outcome, so the analysis workers do not idle through database round trips.
   * A handler that never calls it holds its lane to the outcome.
   */
  run(job: ScanJobDoc, stopping: AbortSignal, released?: () => void): Promise<void | 'deferred' | 'handed-back'>;
  giveUp(job: ScanJobDoc): Promise<void>;
  /** Finds work that should have been queued but was not (a crash in between); run now and then. */
  sweep?(): Promise<number>;
}

const SWEEP_INTERVAL_MS = 60_000;
/**
 * A job whose holder died during the package's analysis this many times ends with a verdict. After the first, the
 * package is analysed alone in its process (runScanJob), so the second is its own doing, not a neighbour's; a
 * graceful stop unmarks the analyses in hand first, so a deploy that kills before they end blames no package.
 */
export const MAX_INTERRUPTED_ANALYSES = 2;

export interface RunnerOptions {
  /** Wait between polls while no job is due (real time: it only paces the loop, nothing expires by it). */
  pollIntervalMs: number;
  /** How long a claim holds; renewed while the job runs, so only a crashed or hung holder loses it. */
  leaseMs: number;
  /** After this many claims the job fails with a scan that says so, instead of being retried forever. */
  maxAttempts: number;
  /** Jobs run at once by this runner (SCAN_WORKERS: one per analysis worker). */
  concurrency: number;
  /**
   * Jobs claimed beyond `concurrency`, readied while the others run: a scan job claims, reads its build and copies its
   * package before it queues for an analysis worker (ScanWorkers queues it), so with one ahead a worker that ends an
   * analysis starts the next at once instead of idling through those round trips. Each holds its lease like any
   * claimed job; a graceful stop hands it back before it is analysed (JobHandler.run's `stopping`).
   */
  readyAhead: number;
}

export const DEFAULT_RUNNER_OPTIONS: RunnerOptions = { pollIntervalMs: 1_000, leaseMs: 5 * 60_000, maxAttempts: 5, concurrency: 1, readyAhead: 0 };

/** Retry back-off: 10 s, 20 s, 40 s, ... at most 5 minutes (measured on the service clock). */
export function backoffMs(attempts: number): number {
  return Math.min(10_000 * 2 ** Math.max(0, attempts - 1), 5 * 60_000);
}

/** Claims that count against maxAttempts: a claim whose job was deferred (waiting for another job) is not one. */
export function countedAttempts(job: Pick<ScanJobDoc, 'attempts' | 'deferrals'>): number {
  return job.attempts - (job.deferrals ?? 0);
}

/** lastError is internal, but keep it short and one line. */
function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\s+/g, ' ').slice(0, 300);
}

/**
 * Polls the scan_jobs collection and runs up to `concurrency` due jobs at once (readying `readyAhead` more). Any number of runners, in one process
 * or many, can poll the same collection: claims are atomic, so each job has one holder at a time (see
 * ScanJobsRepo.claim). Apps take turns: the queue is in turn order (ScanJobsRepo.enqueue), and a job of an app that
 * has none running, on any instance, goes before the jobs of one that has; so an app that queues hundreds of packages
 * (or packages that each run to the deadline) delays its own scans, and any other app's waits for one analysis at most
 * (two with `readyAhead`: the job readied was claimed before the other app's arrived).
 */
export class JobRunner {
  private options: RunnerOptions;
  private timer: NodeJS.Timeout | null = null;
  private loop: Promise<void> | null = null;
  private stopped = true;
  private lastSweep = 0;
  /** Lanes claiming and running jobs now; each poll, and each job queued or woken in this process, tops them up to `concurrency`. */
  private readonly lanes = new Set<Promise<void>>();
  /** Jobs a lane has let go of (their analysis ended) that are still writing their outcome. */
  private readonly finishing = new Set<Promise<void>>();
  private unsubscribe: (() => void) | null = null;
  /** The jobs in hand (id -> attempts), to unmark their analyses on a graceful stop. */
  private readonly inHand = new Map<string, number>();
  private stopping = new AbortController();

  constructor(
    private readonly jobs: ScanJobsRepo,
    private readonly handler: JobHandler,
    private readonly clock: Clock,
    private readonly logger: Logger,
    options: Partial<RunnerOptions> = {},
  ) {
    this.options = { ...DEFAULT_RUNNER_OPTIONS, ...options };
  }

  get leaseMs(): number {
    return this.options.leaseMs;
  }

  /** Starts polling (again) in the background. */
  start(options: Partial<Pick<RunnerOptions, 'pollIntervalMs'>> = {}): void {
    this.options = { ...this.options, ...options };
    if (!this.stopped) return;
    this.stopped = false;
    this.stopping = new AbortController();
    this.unsubscribe = this.jobs.onDue(() => this.topUp());
    this.schedule(0);
  }

  /**
   * Stops polling and waits for the jobs in hand to finish. Their analyses are unmarked first: should the process be
   * killed before they end (an orchestrator's stop timeout is often shorter than an analysis), that is no sign
   * against their packages.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.stopping.abort();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await Promise.all([...this.inHand].map(([id, attempts]) => this.jobs.markAnalysing(id, attempts, null).catch(() => false)));
    await this.loop;
    await Promise.all([...this.lanes]);
    await Promise.all([...this.finishing]);
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      this.loop = this.drain().finally(() => {
        this.loop = null;
        if (!this.stopped) this.schedule(this.options.pollIntervalMs);
      });
    }, ms);
    this.timer.unref();
  }

  /**
   * One poll: the sweep now and then, then lanes up to `concurrency`, each running due jobs until none is due. The
   * poll does not wait for its lanes: the next one tops them up, so jobs queued while a lane is busy get a lane of
   * their own within a poll interval. Errors are logged, never thrown.
   */
  private async drain(): Promise<void> {
    try {
      const now = this.clock.now().getTime();
      if (this.handler.sweep && (this.lastSweep === 0 || now - this.lastSweep >= SWEEP_INTERVAL_MS)) {
        this.lastSweep = now;
        const queued = await this.handler.sweep();
        if (queued > 0) this.logger.warn({ queued }, 'queued static scans a crash had left owed');
      }
    } catch (err) {
      this.logger.warn({ err }, 'job sweep failed; retrying on next poll');
    }
    this.topUp();
  }

  /** Starts lanes up to `concurrency` + `readyAhead`; synchronous, so a poll and a nudge at once never start too many. */
  private topUp(): void {
    while (!this.stopped && this.lanes.size < this.options.concurrency + this.options.readyAhead) {
      const lane: Promise<void> = this.lane().finally(() => this.lanes.delete(lane));
      this.lanes.add(lane);
    }
  }

  /**
   * One lane: claims due jobs one after another until none is due, each as soon as the last let its lane go (its
   * analysis ended; its outcome is written beside the next one's analysis). A failure ends the lane, the next poll
   * restarts it.
   */
  private async lane(): Promise<void> {
    try {
      for (let started = await this.startNext(); started; started = this.stopped ? null : await this.startNext()) {
        const done: Promise<void> = started.done
          .catch((err) => this.logger.warn({ err }, 'scan job outcome could not be recorded; the job is retried when its lease lapses'))
          .finally(() => this.finishing.delete(done));
        this.finishing.add(done);
        await started.released;
      }
    } catch (err) {
      this.logger.warn({ err }, 'job poll failed; retrying on next poll');
    }
  }

  /** Claims one due job, an idle app's first, and runs it to an outcome; false when no job was due. */
  async runDue(): Promise<boolean> {
    const started = await this.startNext();
    if (!started) return false;
    await started.done;
    return true;
  }

  /**
   * Claims one due job and starts it: `released` settles when it lets its lane go (JobHandler.run) or ends, `done`
   * at its outcome. Null when no job was due.
   */
  private async startNext(): Promise<{ released: Promise<void>; done: Promise<void> } | null> {
    const job = await this.claimNext();
    if (!job) return null;
    if (this.stopping.signal.aborted) {
      // Claimed as the runner stopped: handed back at once for another instance, not run here.
      await this.jobs.handBack(job._id, job.attempts, this.clock.now());
      return null;
    }
    this.inHand.set(job._id, job.attempts);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const done = this.process(job, release).finally(() => {
      if (this.inHand.get(job._id) === job.attempts) this.inHand.delete(job._id);
      release();
    });
    return { released, done };
  }

  private async claimNext(): Promise<ScanJobDoc | null> {
    const now = this.clock.now();
    const busy = await this.jobs.appsRunning(now);
    return (busy.length ? await this.jobs.claim(now, this.options.leaseMs, busy) : null) ?? this.jobs.claim(now, this.options.leaseMs);
  }

  private async process(job: ScanJobDoc, release: () => void): Promise<void> {
    const log = this.logger.child({ jobId: job._id, buildId: job.buildId, attempt: job.attempts });
    // A holder that crashed during the last allowed attempt leaves a job that is claimed once more: give up now.
    if (countedAttempts(job) > this.options.maxAttempts) return this.giveUp(job, job.lastError ?? 'interrupted', log);
    if (job.analysingSince) {
      const interrupted = await this.jobs.noteInterrupted(job._id, job.attempts);
      log.warn({ interrupted }, 'the last holder of this scan job died while analysing its package');
      job.interruptedAnalyses = interrupted;
    }
    // Also when an earlier attempt reached the count but could not write the verdict: never analysed again.
    if ((job.interruptedAnalyses ?? 0) >= MAX_INTERRUPTED_ANALYSES) {
      recordAttempt('failed');
      return this.giveUp(job, 'analysis interrupted by the end of its process', log);
    }
    const renewer = setInterval(() => {
      this.jobs.renew(job._id, job.attempts, this.clock.now(), this.options.leaseMs).catch((err) => log.warn({ err }, 'job lease renewal failed'));
    }, Math.max(1_000, Math.floor(this.options.leaseMs / 3)));
    renewer.unref();
    const startedAt = process.hrtime.bigint();
    try {
      const outcome = await this.handler.run(job, this.stopping.signal, release);
      clearInterval(renewer);
      if (outcome === 'deferred') return log.info('scan job deferred: an earlier build of the app is still being scanned');
      if (outcome === 'handed-back') {
        await this.jobs.handBack(job._id, job.attempts, this.clock.now());
        return log.info('scan job handed back before its analysis: the service is stopping');
      }
      await this.jobs.complete(job._id, job.attempts, this.clock.now());
      // Jobs of the package's later builds may be waiting for this scan (their baseline): they may run now.
      await this.jobs.wakeWaiters(job._id, this.clock.now());
      recordAttempt('done', startedAt);
      log.info('scan job done');
    } catch (err) {
      clearInterval(renewer);
      const reason = describe(err);
      if (countedAttempts(job) >= this.options.maxAttempts && !this.stopping.signal.aborted) {
        recordAttempt('failed', startedAt);
        return this.giveUp(job, reason, log);
      }
      const now = this.clock.now();
      // Stopped before it could run: another instance may take it at once.
      const runAfter = this.stopping.signal.aborted ? now : new Date(now.getTime() + backoffMs(countedAttempts(job)));
      await this.jobs.retryLater(job._id, job.attempts, now, runAfter, reason);
      recordAttempt('retry', startedAt);
      log.warn({ reason }, 'scan job failed; retrying later');
    }
  }

  /** The final scan is written before the job is marked failed: a crash in between only repeats this step. */
  private async giveUp(job: ScanJobDoc, reason: string, log: Logger): Promise<void> {
    // Only the current holder may write the failure: a holder whose lease lapsed must not pre-empt the scan of the
    // runner that took the job over.
    if (!(await this.jobs.renew(job._id, job.attempts, this.clock.now(), this.options.leaseMs))) return;
    await this.handler.giveUp(job);
    await this.jobs.fail(job._id, job.attempts, this.clock.now(), reason);
    await this.jobs.wakeWaiters(job._id, this.clock.now());
    log.error({ reason }, 'scan job failed for good');
  }
}
