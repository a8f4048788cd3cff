import type { Deps } from '../core/deps';
import type { ThreatDoc } from '../data/threats-repo';
import type { WebhookDoc, WebhookEvent } from '../data/webhooks-repo';
import type { WebhookDeliveryDoc } from '../data/webhook-deliveries-repo';
import { SPIKE_BUCKET_MS } from '../data/webhook-spikes-repo';
import { GRADE_BANDS } from '../scan/score';
import type { FindingRef } from '../scan/model/types';
import { derivedId, newId } from '../core/ids';
import { metrics } from '../metrics/registry';
import { toRestThreat } from '../threats/rest-threat';

/** Deliveries are attempted for this long after the event, then given up. */
export const DELIVERY_WINDOW_MS = 24 * 3600_000;

const VERDICT_RANK = { clean: 0, suspicious: 1, compromised: 2 } as const;

/**
 * threat.opened deliveries queued per webhook and minute; beyond, new threats are not sent (counted as `dropped` in
 * shieldgate_webhook_deliveries_total), and a wave shows as a threat.spike alert instead. Devices hold the ingestion
 * key, so anyone can open threats by the thousand: without a cap, one app's flood would fill the queue every app's
 * alerts share.
 */
export const OPENED_PER_MINUTE = 60;

/** Index of a grade among the bands, best first (A+ = 0); unknown grades rank worst. */
const gradeRank = (grade: string) => {
  const i = GRADE_BANDS.findIndex((b) => b.grade === grade);
  return i < 0 ? GRADE_BANDS.length : i;
};

/** `config` absent: the defaults (a test queueing directly). */
type Needs = Pick<Deps, 'repos' | 'clock' | 'logger' | 'instance'> & Partial<Pick<Deps, 'config'>>;

/** WEBHOOK_MAX_PENDING_PER_APP's default (src/core/config.ts). */
const DEFAULT_MAX_PENDING_PER_APP = 1_000;
/** Deliveries dropped per queueing at most: one queueing adds at most 60 per webhook (OPENED_PER_MINUTE) and 10 webhooks. */
const DROP_BATCH = 1_000;
const DROPPED_REASON = 'dropped unsent: the app had too many deliveries pending (WEBHOOK_MAX_PENDING_PER_APP)';

/**
 * Keeps the app's pending deliveries within WEBHOOK_MAX_PENDING_PER_APP: the oldest beyond it fail unsent, counted in
 * shieldgate_webhook_pending_dropped_total and in their webhook's status (droppedDeliveries). Without it one app's
 * receivers that never keep up (or an app that queues faster than any receiver answers) grow the queue every app's
 * alerts share without bound, and every claim walks past its backlog.
 */
async function enforcePendingCap(deps: Needs, appId: string, now: Date): Promise<void> {
  const cap = deps.config?.webhookDelivery.maxPendingPerApp ?? DEFAULT_MAX_PENDING_PER_APP;
  const over = await deps.repos.webhookDeliveries.overCap(appId, cap, now, DROP_BATCH);
  if (!over.length) return;
  const byWebhook = new Map<string, string[]>();
  for (const d of over) byWebhook.set(d.webhookId, [...(byWebhook.get(d.webhookId) ?? []), d._id]);
  let dropped = 0;
  for (const [webhookId, ids] of byWebhook) {
    // Counted as dropped only where this queueing changed them: two instances racing drop each delivery once.
    const n = await deps.repos.webhookDeliveries.drop(ids, now, DROPPED_REASON);
    await deps.repos.webhooks.countDropped(appId, webhookId, n, now);
    dropped += n;
  }
  if (!dropped) return;
  metrics.webhookPendingDropped.inc(dropped);
  deps.logger.warn({ appId, dropped, maxPendingPerApp: cap }, 'webhook deliveries dropped: the app has too many pending');
}

/** `id`: a derived id for an event that may be queued again by a retried job (queued once per id); else a new one. */
function delivery(webhook: WebhookDoc, type: WebhookEvent, data: unknown, now: Date, id = newId('whd')): WebhookDeliveryDoc {
  return {
    _id: id,
    appId: webhook.appId,
    webhookId: webhook._id,
    type,
    body: JSON.stringify({ type, timestamp: now.toISOString(), data }),
    status: 'pending',
    attempts: 0,
    nextAttemptAt: now,
    lastAttemptAt: null,
    lastResponseStatus: null,
    lastError: null,
    giveUpAt: new Date(now.getTime() + DELIVERY_WINDOW_MS),
    createdAt: now,
  };
}

/**
 * Queues what the app's webhooks ask for. Never throws: an alert that cannot be queued is logged, and the request that
 * caused it (an ingestion, a scan, an exchange) carries on as if no webhook existed.
 */
async function enqueue(deps: Needs, appId: string, event: WebhookEvent, build: (webhooks: WebhookDoc[], now: Date) => Promise<WebhookDeliveryDoc[]> | WebhookDeliveryDoc[]): Promise<void> {
  try {
    const webhooks = (await deps.instance.webhooks.of(deps.repos, appId)).filter((w) => w.events.includes(event));
    if (!webhooks.length) return;
    const now = deps.clock.now();
    const docs = await build(webhooks, now);
    if (!docs.length) return;
    await deps.repos.webhookDeliveries.insert(docs);
    await enforcePendingCap(deps, appId, now);
  } catch (error) {
    deps.logger.error({ err: error, appId, event }, 'webhook delivery not queued');
  }
}

/**
 * The Threat as REST shows it (the one REST Threat), plus appId. `count` is the occurrences the window opened with:
 * events with an eventId are counted by merge records rather than by the window document, so the document's own
 * count can be lower.
 */
function threatData(t: ThreatDoc, occurrences: number) {
  return { appId: t.appId, ...toRestThreat({ ...t, id: t._id }), count: occurrences };
}

/**
 * After an ingestion: `threat.opened` for each new threat (window) at or above a webhook's minVerdict, and
 * `threat.spike` when a detection's 5-minute counter crosses a webhook's threshold. The counter is one atomic $inc per
 * (detection, bucket) and batch, so exactly one ingestion sees it cross and queues the alert.
 */
export async function notifyIngested(deps: Needs, appId: string, opened: { doc: ThreatDoc; occurrences: number }[], counts: Map<string, number>): Promise<void> {
  if (opened.length) {
    await enqueue(deps, appId, 'threat.opened', async (webhooks, now) => {
      const minute = new Date(Math.floor(now.getTime() / 60_000) * 60_000);
      const out: WebhookDeliveryDoc[] = [];
      for (const w of webhooks) {
        const due = opened.filter((o) => VERDICT_RANK[o.doc.verdict] >= VERDICT_RANK[w.minVerdict]);
        if (!due.length) continue;
        const after = await deps.repos.webhookSpikes.addOpened(w._id, minute, due.length);
        const room = Math.max(0, OPENED_PER_MINUTE - (after - due.length));
        for (const o of due.slice(0, room)) out.push(delivery(w, 'threat.opened', threatData(o.doc, o.occurrences), now));
        if (due.length > room) {
          metrics.webhookDeliveries.inc({ outcome: 'dropped' }, due.length - room);
          if (room > 0) deps.logger.warn({ appId, webhookId: w._id, perMinute: OPENED_PER_MINUTE }, 'threat.opened deliveries over the per-minute cap are not queued');
        }
      }
      return out;
    });
  }
  if (counts.size) {
    await enqueue(deps, appId, 'threat.spike', async (webhooks, now) => {
      const bucket = new Date(Math.floor(now.getTime() / SPIKE_BUCKET_MS) * SPIKE_BUCKET_MS);
      const out: WebhookDeliveryDoc[] = [];
      for (const [detection, n] of counts) {
        const after = await deps.repos.webhookSpikes.add(appId, detection, bucket, n);
        for (const w of webhooks) {
          if (after - n <= w.spikeThreshold && after > w.spikeThreshold) {
            out.push(delivery(w, 'threat.spike', { appId, detection, bucketStart: bucket.toISOString(), bucketMinutes: SPIKE_BUCKET_MS / 60_000, count: after, threshold: w.spikeThreshold }, now));
          }
        }
      }
      return out;
    });
  }
}

/** After a static scan: `scan.completed` for webhooks whose gradeBelow is better than the scan's grade. */
/** Fixed and come-back findings listed in a `scan.completed` body at most; the counts say how many there were. */
export const SCAN_COMPLETED_LISTED = 50;

export interface CompletedScan {
  appId: string;
  scanId: string;
  buildId: string;
  grade: string;
  score: number;
  /** Absent or null: the scan was not compared (no fixed nor come-back findings). */
  diff?: { new: number; existing: number; fixed: number } | null;
  fixedFindings?: FindingRef[];
  /** Findings whose suppression expired or was deleted since the baseline: they count again. */
  unsuppressed?: FindingRef[];
}

/**
 * A static scan graded below a webhook's `gradeBelow`, or one in which suppressed findings came back (their
 * suppression expired or was deleted): the team that accepted them hears that they count again.
 */
export async function notifyScanCompleted(deps: Needs, scan: CompletedScan): Promise<void> {
  const fixed = scan.fixedFindings ?? [];
  const unsuppressed = scan.unsuppressed ?? [];
  const data = {
    appId: scan.appId,
    id: scan.scanId,
    buildId: scan.buildId,
    engine: 'static',
    grade: scan.grade,
    score: scan.score,
    diff: scan.diff ?? null,
    fixedFindings: fixed.slice(0, SCAN_COMPLETED_LISTED),
    unsuppressed: unsuppressed.slice(0, SCAN_COMPLETED_LISTED),
    unsuppressedCount: unsuppressed.length,
  };
  await enqueue(deps, scan.appId, 'scan.completed', (webhooks, now) =>
    webhooks
      .filter((w) => gradeRank(scan.grade) > gradeRank(w.gradeBelow) || unsuppressed.length > 0)
      // One delivery per scan and webhook whichever attempt of the scan job queues it (see writeStaticScan).
      .map((w) => delivery(w, 'scan.completed', data, now, derivedId('whd', `scan.completed:${scan.scanId}:${w._id}`))),
  );
}

/** After a refused CI token exchange of a known app: the reason and the verified subject, never the token. */
export async function notifyOidcDenied(deps: Needs, denial: { appId: string; reason: string; subject: string | null }): Promise<void> {
  await enqueue(deps, denial.appId, 'oidc.denied', (webhooks, now) => webhooks.map((w) => delivery(w, 'oidc.denied', { appId: denial.appId, reason: denial.reason, subject: denial.subject }, now)));
}

export type { Deps };
