import type { Collection, Db } from 'mongodb';
import { ensureIndexes, isDuplicateKeyError } from './db';
import type { WebhookEvent } from './webhooks-repo';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface WebhookDeliveryDoc {
  _id: string; // whd_...: also the `webhook-id` header, the receiver's idempotency key
  appId: string;
  webhookId: string;
  type: WebhookEvent;
  /** The exact body sent on every attempt (the signature covers these bytes). */
  body: string;
  status: DeliveryStatus;
  attempts: number;
  /** When the next attempt is due; while an attempt runs, when its lease ends (a crashed sender's claim lapses). */
  nextAttemptAt: Date;
  lastAttemptAt: Date | null;
  lastResponseStatus: number | null;
  lastError: string | null;
  /** No attempt starts after this (created + 24 h): the delivery fails instead. */
  giveUpAt: Date;
  createdAt: Date;
  /**
   * While an attempt runs: when its claim lapses; null (or absent, older documents) otherwise. The apps with an attempt
   * in flight on any instance are found by it, and count in the service by which senders share lanes (inFlight).
   */
  leaseUntil?: Date | null;
}

/** What a sender needs to choose among due deliveries (no body). */
export type DeliveryCandidate = Pick<WebhookDeliveryDoc, '_id' | 'appId' | 'webhookId' | 'nextAttemptAt'>;

const CANDIDATE_FIELDS = { _id: 1, appId: 1, webhookId: 1, nextAttemptAt: 1 } as const;

/** How many deliveries of a webhook GET shows. */
export const RECENT_DELIVERIES = 5;

/** The durable queue of webhook deliveries. */
export class WebhookDeliveriesRepo {
  static readonly collectionName = 'webhook_deliveries';
  private readonly col: Collection<WebhookDeliveryDoc>;
  constructor(db: Db) {
    this.col = db.collection<WebhookDeliveryDoc>(WebhookDeliveriesRepo.collectionName);
  }
  async ensureIndexes(): Promise<void> {
    await ensureIndexes(this.col, [
      { key: { status: 1, nextAttemptAt: 1 }, name: 'status_next' },
      { key: { appId: 1, webhookId: 1, createdAt: -1, _id: -1 }, name: 'app_webhook_created' },
      { key: { createdAt: 1 }, name: 'created' },
      // The attempts in flight now, on every instance: a handful per sender (inFlight).
      { key: { status: 1, leaseUntil: 1 }, name: 'status_lease' },
      // An app's pending deliveries, newest first, to find those beyond its cap (overCap).
      { key: { appId: 1, status: 1, createdAt: -1 }, name: 'app_status_created' },
    ]);
  }

  /**
   * Inserts the deliveries; one whose _id is already stored (a derived id, queued by an earlier attempt of the same
   * work) is left as it is, and the others are inserted all the same.
   */
  async insert(docs: WebhookDeliveryDoc[]): Promise<void> {
    if (!docs.length) return;
    try {
      await this.col.insertMany(docs, { ordered: false });
    } catch (error) {
      // A bulk error names each failed write (one object or a list, by driver version): all must be duplicates.
      const writeErrors = [(error as { writeErrors?: unknown }).writeErrors ?? []].flat() as Array<{ code?: number }>;
      const onlyDuplicates = isDuplicateKeyError(error) && writeErrors.every((e) => e.code === 11000);
      if (!onlyDuplicates) throw error;
    }
  }

  /** The attempts in flight now (live claims), on any instance: at most `limit`, their app and webhook only. */
  inFlight(now: Date, limit = 1000): Promise<DeliveryCandidate[]> {
    return this.col
      .find({ status: 'pending', leaseUntil: { $gt: now } }, { projection: CANDIDATE_FIELDS })
      .limit(limit)
      .toArray();
  }

  /**
   * Up to `limit` of the most overdue pending deliveries (with `otherThan`, only those of other apps), without their
   * bodies: the candidates a sender picks from fairly (delivery-worker.ts), then claims one by one with claimById.
   * With `otherThan`, MongoDB walks status_next past those apps' due deliveries: at most maxPendingPerApp each.
   */
  dueCandidates(now: Date, limit: number, otherThan: string[] = []): Promise<DeliveryCandidate[]> {
    return this.col
      .find(
        { status: 'pending', nextAttemptAt: { $lte: now }, ...(otherThan.length ? { appId: { $nin: otherThan } } : {}) },
        { projection: CANDIDATE_FIELDS },
      )
      .sort({ nextAttemptAt: 1 })
      .limit(limit)
      .toArray();
  }

  /**
   * Claims this delivery if it is still pending and due at `now` (no other sender claimed it meanwhile): counts the
   * attempt and moves nextAttemptAt and leaseUntil to the end of the lease, in one atomic update by _id; null when it
   * was taken. The attempt number fences the outcome: a sender whose lease lapsed and was claimed again cannot record
   * over the newer attempt (recordAttempt, defer).
   */
  claimById(id: string, now: Date, leaseMs: number): Promise<WebhookDeliveryDoc | null> {
    const until = new Date(now.getTime() + leaseMs);
    return this.col.findOneAndUpdate(
      { _id: id, status: 'pending', nextAttemptAt: { $lte: now } },
      { $set: { nextAttemptAt: until, leaseUntil: until, lastAttemptAt: now }, $inc: { attempts: 1 } },
      { returnDocument: 'after' },
    );
  }

  /**
   * The app's pending deliveries beyond its newest `keep`, oldest last (at most `limit`), other than those in flight:
   * what the per-app cap drops. Served by app_status_created, skipping `keep` index entries.
   */
  overCap(appId: string, keep: number, now: Date, limit: number): Promise<Array<Pick<WebhookDeliveryDoc, '_id' | 'webhookId'>>> {
    return this.col
      .find({ appId, status: 'pending', leaseUntil: { $not: { $gt: now } } }, { projection: { _id: 1, webhookId: 1 } })
      .sort({ createdAt: -1 })
      .skip(keep)
      .limit(limit)
      .toArray();
  }

  /**
   * Drops pending deliveries (the per-app cap): they fail at once, never sent, with `reason`. Only those still pending
   * and not claimed meanwhile; how many were dropped.
   */
  async drop(ids: string[], now: Date, reason: string): Promise<number> {
    if (!ids.length) return 0;
    const result = await this.col.updateMany(
      { _id: { $in: ids }, status: 'pending', leaseUntil: { $not: { $gt: now } } },
      { $set: { status: 'failed', nextAttemptAt: now, leaseUntil: null, lastError: reason } },
    );
    return result.modifiedCount;
  }

  /**
   * Puts a claimed delivery back without an attempt (its webhook's breaker is open): due again at `until`, with the
   * attempt its claim counted taken back. Fenced like recordAttempt.
   */
  async defer(id: string, attempt: number, until: Date): Promise<boolean> {
    const result = await this.col.updateOne({ _id: id, attempts: attempt }, { $set: { nextAttemptAt: until, leaseUntil: null }, $inc: { attempts: -1 } });
    return result.modifiedCount === 1;
  }

  /**
   * Puts every due, unclaimed pending delivery of one webhook back until `until` (its breaker is open), in one update
   * (app_webhook_created). One at a time, each costs a claim and a put-back, every sender churns through them at each
   * breaker window while other deliveries wait behind them (the soak saw prompt receivers' deliveries wait 9 minutes
   * behind a failing receiver's backlog); and an instance whose own breaker is closed would claim them again at once.
   */
  async deferWebhook(appId: string, webhookId: string, now: Date, until: Date): Promise<number> {
    const result = await this.col.updateMany(
      { appId, webhookId, status: 'pending', nextAttemptAt: { $lt: until }, leaseUntil: { $not: { $gt: now } } },
      { $set: { nextAttemptAt: until } },
    );
    return result.modifiedCount;
  }

  /** Records an attempt's outcome, only if no later attempt claimed the delivery meanwhile. */
  async recordAttempt(
    id: string,
    attempt: number,
    outcome: { status: DeliveryStatus; nextAttemptAt: Date; lastResponseStatus: number | null; lastError: string | null },
  ): Promise<boolean> {
    const result = await this.col.updateOne({ _id: id, attempts: attempt }, { $set: { ...outcome, leaseUntil: null } });
    return result.modifiedCount === 1;
  }

  /** The newest deliveries of a webhook. */
  recentForWebhook(appId: string, webhookId: string, limit = RECENT_DELIVERIES): Promise<WebhookDeliveryDoc[]> {
    return this.col.find({ appId, webhookId }).sort({ createdAt: -1, _id: -1 }).limit(limit).toArray();
  }

  /** Removes up to `batch` deliveries queued before `cutoff`; how many went. */
  async deleteOlderThan(cutoff: Date, batch: number): Promise<number> {
    const ids = await this.col.find({ createdAt: { $lt: cutoff } }, { projection: { _id: 1 } }).sort({ createdAt: 1 }).limit(batch).toArray();
    if (ids.length === 0) return 0;
    const result = await this.col.deleteMany({ _id: { $in: ids.map((d) => d._id) }, createdAt: { $lt: cutoff } });
    return result.deletedCount;
  }

  /** Drops a deleted webhook's deliveries (pending ones must not be sent anymore). */
  async deleteForWebhook(appId: string, webhookId: string): Promise<void> {
    await this.col.deleteMany({ appId, webhookId });
  }
}
