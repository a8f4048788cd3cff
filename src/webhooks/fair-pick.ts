import type { DeliveryCandidate } from '../data/webhook-deliveries-repo';

/**
 * How senders share their lanes among apps, and among an app's webhooks. A sender reads a pool of due deliveries
 * (the most overdue, and under a backlog the most overdue of every app not among them) and picks from it: first the app with the
 * least service (attempts in flight on any instance, plus claims this sender made in the last minute), then that
 * app's webhook with the least service, then the oldest delivery of it; ties go to the oldest.
 *
 * Why service and not just "an attempt in flight": under a backlog, an app whose receiver is slow always has one in
 * flight, and a rule that puts such apps last starves them outright while quicker apps have anything due (a 10-minute
 * soak saw an app's prompt receiver get nothing for 5 minutes). Counting recent claims gives every app with due work
 * its turn in proportion, and an app that was not served lately, such as a tenant's first alert, goes first.
 */

/** Claims per app and per webhook over the last minute, in 10-second buckets, bounded by the apps served. */
export class RecentClaims {
  private static readonly BUCKET_MS = 10_000;
  private static readonly BUCKETS = 6;
  private buckets: { start: number; counts: Map<string, number> }[] = [];

  add(appId: string, webhookId: string, nowMs: number): void {
    const start = nowMs - (nowMs % RecentClaims.BUCKET_MS);
    let bucket = this.buckets.at(-1);
    if (!bucket || bucket.start !== start) {
      bucket = { start, counts: new Map() };
      this.buckets.push(bucket);
    }
    this.prune(nowMs);
    for (const key of [appKey(appId), webhookKey(webhookId)]) bucket.counts.set(key, (bucket.counts.get(key) ?? 0) + 1);
  }

  /** Claims of this key (appKey, webhookKey) within the last minute. */
  count(key: string, nowMs: number): number {
    this.prune(nowMs);
    return this.buckets.reduce((sum, b) => sum + (b.counts.get(key) ?? 0), 0);
  }

  private prune(nowMs: number): void {
    const oldest = nowMs - RecentClaims.BUCKET_MS * RecentClaims.BUCKETS;
    while (this.buckets.length && this.buckets[0].start <= oldest) this.buckets.shift();
  }
}

export const appKey = (appId: string) => `app:${appId}`;
export const webhookKey = (webhookId: string) => `whk:${webhookId}`;

/** Attempts in flight per app and per webhook (appKey, webhookKey), counted once per pool read. */
export function runningCounts(inFlight: DeliveryCandidate[]): Map<string, number> {
  const running = new Map<string, number>();
  for (const d of inFlight) {
    for (const key of [appKey(d.appId), webhookKey(d.webhookId)]) running.set(key, (running.get(key) ?? 0) + 1);
  }
  return running;
}

/**
 * Takes the fairest candidate out of `pool` (see above): `running` counts the attempts in flight on any instance
 * (runningCounts), `recent` this sender's claims. Undefined when the pool is empty.
 */
export function takeFairest(pool: DeliveryCandidate[], running: Map<string, number>, recent: RecentClaims, nowMs: number): DeliveryCandidate | undefined {
  if (!pool.length) return undefined;
  const service = (key: string) => (running.get(key) ?? 0) + recent.count(key, nowMs);
  const fairest = (candidates: DeliveryCandidate[], keyOf: (d: DeliveryCandidate) => string): DeliveryCandidate[] => {
    // The oldest candidate of each key, then the key with the least service, ties to the oldest.
    const oldest = new Map<string, DeliveryCandidate>();
    for (const d of candidates) {
      const seen = oldest.get(keyOf(d));
      if (!seen || d.nextAttemptAt.getTime() < seen.nextAttemptAt.getTime()) oldest.set(keyOf(d), d);
    }
    let best: { key: string; service: number; at: number } | null = null;
    for (const [key, d] of oldest) {
      const s = service(key);
      const at = d.nextAttemptAt.getTime();
      if (!best || s < best.service || (s === best.service && at < best.at)) best = { key, service: s, at };
    }
    return candidates.filter((d) => keyOf(d) === best!.key);
  };
  const ofApp = fairest(pool, (d) => appKey(d.appId));
  const ofWebhook = fairest(ofApp, (d) => webhookKey(d.webhookId));
  const chosen = ofWebhook.reduce((a, b) => (b.nextAttemptAt.getTime() < a.nextAttemptAt.getTime() ? b : a));
  pool.splice(pool.indexOf(chosen), 1);
  return chosen;
}
