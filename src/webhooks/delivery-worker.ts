import type { Repositories } from '../data/repositories';
import type { DeliveryCandidate, WebhookDeliveryDoc } from '../data/webhook-deliveries-repo';
import type { WebhookDoc } from '../data/webhooks-repo';
import type { Clock } from '../core/clock';
import type { Logger } from '../core/logger';
import type { Config } from '../core/config';
import { openSecret } from '../crypto/secret-box';
import { secretBytes, signDelivery } from './signature';
import { sendSigned, type SendOutcome } from './send';
import { metrics } from '../metrics/registry';
import { RecentClaims, runningCounts, takeFairest } from './fair-pick';

/**
 * A claim outlives the attempt's deadline (10 s at most) by this margin, which covers writing the outcome through a
 * stalled database; only a crashed sender's claim lapses, and its delivery is tried again within a minute of the
 * crash (the soak measured 5 minutes of silence per crash when the claim held that long).
 */
const LEASE_MARGIN_MS = 50_000;

/** How many due deliveries a sender reads to choose from, and how long it chooses from them before reading again. */
const POOL_SIZE = 200; // WebhookWorker options.poolSize overrides it (tests)
const POOL_TTL_MS = 1_000;

/** Back-off after the n-th failed attempt: 30 s, 1 min, 2 min ... at most 1 h, until the delivery's 24 h are over. */
export function retryDelayMs(attempts: number): number {
  return Math.min(30_000 * 2 ** Math.max(0, attempts - 1), 3600_000);
}

/**
 * A circuit breaker per webhook, on each instance: after BREAKER_FAILURES attempts in a row that failed or took longer
 * than SLOW_ATTEMPT_MS, the webhook's deliveries are put back (no attempt counted) until the breaker's time is over,
 * then one attempt tries again: 1 min, doubling to at most 30 min. Senders are few and shared by every app: without
 * it, a receiver that is down, drops connections or answers slowly holds them all and every other app's alerts wait.
 */
export const BREAKER_FAILURES = 5;
export const SLOW_ATTEMPT_MS = 5_000;
const BREAKER_BASE_MS = 60_000;
const BREAKER_MAX_MS = 30 * 60_000;
export function breakerOpenMs(failures: number): number {
  return Math.min(BREAKER_BASE_MS * 2 ** Math.max(0, failures - BREAKER_FAILURES), BREAKER_MAX_MS);
}

export interface WorkerNeeds {
  repos: Repositories;
  clock: Clock;
  logger: Logger;
  config: Pick<Config, 'keyEncryptionKey' | 'webhookAllowInsecureLoopback' | 'webhookDns' | 'webhookDelivery'>;
}

/**
 * Sends due webhook deliveries. Any number of workers, in one process or many, share the queue: a claim is atomic and
 * its outcome is fenced by the attempt number (WebhookDeliveriesRepo.claimById). Lanes are shared among apps and
 * their webhooks (claimNext, fair-pick.ts).
 */
export class WebhookWorker {
  /** Consecutive failed or slow attempts per webhook, and until when its deliveries wait (service clock, ms). */
  private readonly breakers = new Map<string, { failures: number; openUntil: number }>();
  private lanes: Promise<void>[] = [];
  private readonly resting = new Set<() => void>();
  private stopped = true;
  /** Due deliveries this sender picks from, and the attempts in flight per app and webhook when it was read. */
  private pool: { due: DeliveryCandidate[]; running: Map<string, number>; readAt: number } | null = null;
  private refill: Promise<void> | null = null;
  private readonly recent = new RecentClaims();

  constructor(
    private readonly needs: WorkerNeeds,
    private readonly options: { pollIntervalMs: number; concurrency: number; poolSize?: number } = { pollIntervalMs: 1_000, concurrency: 4 },
  ) {}

  /**
   * Runs `concurrency` lanes, each on its own: claim, attempt, claim again, resting a poll interval only when nothing is
   * due. Lanes that waited for one another (a pass that ended when its last lane found nothing) left an instance with
   * one working lane for as long as that lane kept finding work: a soak saw deliveries fall minutes behind.
   */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.pool = null;
    this.lanes = Array.from({ length: this.options.concurrency }, () => this.runLane());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const wake of this.resting) wake();
    await Promise.all(this.lanes);
    this.lanes = [];
  }

  private async runLane(): Promise<void> {
    while (!this.stopped) {
      const outcome = await this.sendOne().catch((error) => {
        this.needs.logger.error({ err: error }, 'webhook worker failed');
        return 'none' as const;
      });
      if (outcome === 'none' && !this.stopped) await this.rest(this.options.pollIntervalMs);
    }
  }

  private rest(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.resting.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.resting.add(wake);
    });
  }

  /** Sends every delivery due now (several lanes at once, until none is due); returns how many attempts were made. */
  async runDue(): Promise<number> {
    let made = 0;
    this.pool = null; // the queue as it is now
    const lane = async () => {
      for (let outcome; (outcome = await this.sendOne()) !== 'none'; ) if (outcome === 'sent') made++;
    };
    await Promise.all(Array.from({ length: this.options.concurrency }, lane));
    return made;
  }

  /** Claims the fairest due delivery and attempts it, or puts it back when its webhook's breaker is open. */
  private async sendOne(): Promise<'sent' | 'deferred' | 'none'> {
    const now = this.needs.clock.now();
    const job = await this.claimNext(now);
    if (!job) return 'none';
    const openUntil = this.breakers.get(job.webhookId)?.openUntil ?? 0;
    if (openUntil > now.getTime() && job.giveUpAt.getTime() > now.getTime()) {
      await this.needs.repos.webhookDeliveries.defer(job._id, job.attempts, new Date(openUntil));
      await this.deferBacklog(job, now, openUntil);
      return 'deferred';
    }
    await this.attempt(job);
    return 'sent';
  }

  /**
   * The fairest due delivery, claimed (fair-pick.ts). The pool is read at most once a second and shared by the lanes;
   * a candidate another sender claimed meanwhile is skipped.
   */
  private async claimNext(now: Date): Promise<WebhookDeliveryDoc | null> {
    const leaseMs = this.needs.config.webhookDelivery.attemptTimeoutMs + LEASE_MARGIN_MS;
    for (let refilled = false; ; ) {
      if (!this.pool || performance.now() - this.pool.readAt > POOL_TTL_MS) {
        this.refill ??= this.readPool(now).finally(() => (this.refill = null));
        await this.refill;
        refilled = true;
      }
      const pool = this.pool!;
      let candidate;
      while ((candidate = takeFairest(pool.due, pool.running, this.recent, now.getTime()))) {
        const job = await this.needs.repos.webhookDeliveries.claimById(candidate._id, now, leaseMs);
        if (!job) continue; // another sender took it
        this.recent.add(job.appId, job.webhookId, now.getTime());
        return job;
      }
      if (refilled) return null;
      this.pool = null; // spent: read it again once; if that finds nothing, nothing is due
    }
  }

  /**
   * The attempts in flight on every instance and the most overdue deliveries; when those fill the pool (a backlog),
   * also the most overdue of every other app, without which one app's backlog would hide another app's first alert.
   */
  private async readPool(now: Date): Promise<void> {
    const deliveries = this.needs.repos.webhookDeliveries;
    const size = this.options.poolSize ?? POOL_SIZE;
    const inFlight = await deliveries.inFlight(now);
    const oldest = await deliveries.dueCandidates(now, size);
    // Fewer than the pool's size: that is every due delivery, and no app is hidden.
    const represented = oldest.length < size ? [] : [...new Set(oldest.map((d) => d.appId))];
    const others = represented.length ? await deliveries.dueCandidates(now, size, represented) : [];
    const due = [...new Map([...oldest, ...others].map((d) => [d._id, d])).values()];
    this.pool = { due, running: runningCounts(inFlight), readAt: performance.now() };
  }

  /**
   * Puts the due backlog of a webhook whose breaker is open back until `until`, in one update, on every instance
   * (deferWebhook), and drops its candidates from this sender's pool.
   */
  private async deferBacklog(job: WebhookDeliveryDoc, now: Date, until: number): Promise<void> {
    await this.needs.repos.webhookDeliveries.deferWebhook(job.appId, job.webhookId, now, new Date(until));
    if (this.pool) this.pool.due = this.pool.due.filter((d) => d.webhookId !== job.webhookId);
  }

  private async attempt(job: WebhookDeliveryDoc): Promise<void> {
    const { repos, clock, logger } = this.needs;
    const webhook = await repos.webhooks.findForApp(job.appId, job.webhookId);
    if (!webhook) {
      await repos.webhookDeliveries.recordAttempt(job._id, job.attempts, { status: 'failed', nextAttemptAt: clock.now(), lastResponseStatus: null, lastError: 'webhook deleted' });
      metrics.webhookDeliveries.inc({ outcome: 'dropped' });
      return;
    }
    let outcome: SendOutcome;
    if (job.giveUpAt.getTime() < clock.now().getTime()) {
      // Claimed after its 24 hours (a backlog): too late to be useful, and not sent.
      outcome = { ok: false, status: null, error: 'not sent within 24 hours of the event' };
    } else {
      const started = performance.now();
      outcome = await this.send(job, webhook);
      const openUntil = this.trip(job.webhookId, outcome.ok && performance.now() - started <= SLOW_ATTEMPT_MS, clock.now());
      // The breaker just opened: its webhook's backlog waits from now, not one claim at a time.
      if (openUntil) await this.deferBacklog(job, clock.now(), openUntil);
    }
    const now = clock.now();
    const next = new Date(now.getTime() + retryDelayMs(job.attempts));
    const status = outcome.ok ? 'delivered' : next.getTime() > job.giveUpAt.getTime() ? 'failed' : 'pending';
    await repos.webhookDeliveries.recordAttempt(job._id, job.attempts, { status, nextAttemptAt: status === 'pending' ? next : now, lastResponseStatus: outcome.status, lastError: outcome.error });
    metrics.webhookDeliveries.inc({ outcome: status === 'delivered' ? 'delivered' : status === 'failed' ? 'given_up' : 'retry' });
    // Never the URL's query (it may carry a token) nor the secret: ids and outcome only.
    const fields = { appId: job.appId, webhookId: job.webhookId, deliveryId: job._id, attempt: job.attempts, status: outcome.status, error: outcome.error };
    if (status === 'failed') logger.warn(fields, 'webhook delivery given up');
    else if (!outcome.ok) logger.info(fields, 'webhook delivery attempt failed');
  }

  private async send(job: WebhookDeliveryDoc, webhook: WebhookDoc): Promise<SendOutcome> {
    const { clock, config } = this.needs;
    try {
      const key = secretBytes(openSecret(webhook.secret, config.keyEncryptionKey, webhook._id));
      if (!key) return { ok: false, status: null, error: 'stored secret unreadable' };
      const timestamp = Math.floor(clock.now().getTime() / 1000);
      const headers = { 'webhook-id': job._id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signDelivery(key, job._id, timestamp, job.body) };
      // One deadline for the whole attempt (WEBHOOK_ATTEMPT_TIMEOUT_MS), kept by the sender: past it the attempt fails
      // and its lane moves on, so a receiver cannot hold a lane longer by answering 200 slowly, nor by trickling its
      // body after a prompt status line.
      return await sendSigned(webhook.url, headers, job.body, {
        deadlineMs: config.webhookDelivery.attemptTimeoutMs,
        allowLoopback: config.webhookAllowInsecureLoopback,
        dns: config.webhookDns,
      });
    } catch {
      // A secret sealed under another KEY_ENCRYPTION_KEY, or a fault of ours: recorded as a failed attempt, so the
      // delivery still ends within its 24 hours instead of coming back at every lease forever.
      return { ok: false, status: null, error: 'the delivery could not be prepared (secret unreadable?)' };
    }
  }

  /** Counts the attempt against the webhook's breaker; when it opens the breaker, until when (service ms), else 0. */
  private trip(webhookId: string, healthy: boolean, now: Date): number {
    if (healthy) {
      this.breakers.delete(webhookId);
      return 0;
    }
    if (this.breakers.size > 10_000) this.breakers.clear(); // bounded: at worst, failing webhooks get their 5 tries again
    const failures = (this.breakers.get(webhookId)?.failures ?? 0) + 1;
    const openUntil = failures >= BREAKER_FAILURES ? now.getTime() + breakerOpenMs(failures) : 0;
    this.breakers.set(webhookId, { failures, openUntil });
    if (failures === BREAKER_FAILURES) this.needs.logger.warn({ webhookId, failures }, 'webhook failing: its deliveries wait');
    return openUntil;
  }
}
