// Protects: webhook delivery lanes are shared fairly among apps (docs/configuration.md, "Webhooks"). A delivery of
// an app with no attempt in flight, on any instance, is claimed before older deliveries of an app that has one, and an
// app that always has one in flight still gets its turns; an
// app's pending deliveries are capped (WEBHOOK_MAX_PENDING_PER_APP), the oldest dropped unsent and counted in the
// metrics and the webhook's status; an attempt has one deadline for the whole exchange (WEBHOOK_ATTEMPT_TIMEOUT_MS),
// and an answer after it is a failure; the cleanup removes everything past retention however much there is; one
// app's slow receivers do not delay another app's first delivery by more than one attempt's deadline.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startHarness, bearer, json, readJson, type Harness } from '../support/harness';
import { WebhookWorker } from '../../src/webhooks/delivery-worker';
import type { WebhookDeliveryDoc } from '../../src/data/webhook-deliveries-repo';
import { DELIVERY_WINDOW_MS, notifyOidcDenied } from '../../src/webhooks/enqueue';
import { metrics } from '../../src/metrics/registry';
import { createWebhookRetention, DELIVERY_RETENTION_MS } from '../../src/jobs/webhook-retention';

/** A receiver on loopback that answers `status` after `delayMs` (real time) and records what it got, in order. */
class Receiver {
  received: { id: string; at: number }[] = [];
  delayMs = 0;
  private server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      this.received.push({ id: String(req.headers['webhook-id']), at: performance.now() });
      setTimeout(() => res.writeHead(200).end('ok'), this.delayMs);
    });
  });
  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }
  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }
}

let h: Harness;
const receivers: Receiver[] = [];
beforeAll(async () => {
  h = await startHarness({ env: { WEBHOOK_ALLOW_INSECURE_LOOPBACK: '1' } });
});
afterAll(async () => {
  for (const r of receivers) await r.stop().catch(() => undefined);
  await h.close();
});
// Each test starts with an empty queue: the worker serves every app's deliveries.
beforeEach(async () => {
  await h.deps.db.collection('webhook_deliveries').deleteMany({});
});

async function receiver(delayMs = 0): Promise<Receiver> {
  const r = new Receiver();
  r.delayMs = delayMs;
  await r.listen();
  receivers.push(r);
  return r;
}

const worker = (concurrency = 4, attemptTimeoutMs?: number) =>
  new WebhookWorker(
    {
      repos: h.deps.repos,
      clock: h.clock,
      logger: h.deps.logger,
      config: attemptTimeoutMs ? { ...h.deps.config, webhookDelivery: { ...h.deps.config.webhookDelivery, attemptTimeoutMs } } : h.deps.config,
    },
    { pollIntervalMs: 1_000, concurrency },
  );

/** An app with `n` webhooks to `url`; its owner's key and the webhooks' ids. */
async function appWithWebhooks(url: string, n: number): Promise<{ appId: string; owner: string; webhookIds: string[] }> {
  const { appId } = await h.newApp('enterprise');
  const owner = (await h.newKey(appId, ['rules:write', 'rules:read'])).key;
  const webhookIds: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await h.api(`/v1/apps/${appId}/webhooks`, { method: 'POST', headers: json(owner), body: JSON.stringify({ url, events: ['oidc.denied'] }) });
    expect(res.status).toBe(201);
    webhookIds.push((await readJson(res)).id);
  }
  return { appId, owner, webhookIds };
}

let serial = 0;
/** Queues `n` deliveries round the app's webhooks, due now, each a millisecond of service time after the last. */
async function queue(app: { appId: string; webhookIds: string[] }, n: number): Promise<string[]> {
  const docs: WebhookDeliveryDoc[] = [];
  for (let i = 0; i < n; i++) {
    const now = h.clock.now();
    docs.push({
      _id: `whd_fair${String(serial++).padStart(8, '0')}`,
      appId: app.appId,
      webhookId: app.webhookIds[i % app.webhookIds.length],
      type: 'oidc.denied',
      body: JSON.stringify({ type: 'oidc.denied', timestamp: now.toISOString(), data: { appId: app.appId, reason: 'test', subject: null } }),
      status: 'pending',
      attempts: 0,
      nextAttemptAt: now,
      lastAttemptAt: null,
      lastResponseStatus: null,
      lastError: null,
      giveUpAt: new Date(now.getTime() + DELIVERY_WINDOW_MS),
      createdAt: now,
    });
    h.clock.advance(1);
  }
  await h.deps.repos.webhookDeliveries.insert(docs);
  return docs.map((d) => d._id);
}

it('claims a delivery of an app with no attempt in flight before the older deliveries of an app that has one elsewhere', async () => {
  const r = await receiver();
  const flooding = await appWithWebhooks(r.url, 2);
  const other = await appWithWebhooks(r.url, 1);
  const backlog = await queue(flooding, 5);
  const [alert] = await queue(other, 1);
  // Another instance holds the flooding app's oldest delivery (an attempt to a slow receiver, say).
  const held = await h.deps.repos.webhookDeliveries.claimById(backlog[0], h.clock.now(), 60_000);
  expect(held?._id).toBe(backlog[0]);

  await worker(1).runDue();
  // The other app's alert went first; then the flooding app's, oldest first, as no other app had any.
  expect(r.received.map((x) => x.id)).toEqual([alert, ...backlog.slice(1)]);
});

it('gives an app whose slow receiver always has an attempt in flight its turns while another app keeps deliveries due', async () => {
  const r = await receiver();
  const busy = await appWithWebhooks(r.url, 2); // its first webhook's receiver is slow: an attempt is always in flight
  const quick = await appWithWebhooks(r.url, 1);
  const [slow] = await queue({ ...busy, webhookIds: [busy.webhookIds[0]] }, 1);
  const waiting = await queue({ ...busy, webhookIds: [busy.webhookIds[1]] }, 3);
  const flowing = await queue(quick, 6);
  expect(await h.deps.repos.webhookDeliveries.claimById(slow, h.clock.now(), 60_000)).not.toBeNull();

  await worker(1).runDue();
  // Turns by service: the quick app first (nothing in flight), then each in turn, ties to the oldest. "An app with an
  // attempt in flight goes last" would have sent all six of the quick app's first and the busy app's three after.
  expect(r.received.map((x) => x.id)).toEqual([flowing[0], waiting[0], flowing[1], waiting[1], flowing[2], waiting[2], ...flowing.slice(3)]);
});

it('finds another app\'s alert behind one app\'s backlog larger than the pool a sender reads', async () => {
  const r = await receiver();
  const flooding = await appWithWebhooks(r.url, 1);
  const other = await appWithWebhooks(r.url, 1);
  const backlog = await queue(flooding, 30); // more than the 20 most overdue this sender reads
  const [alert] = await queue(other, 1);

  await new WebhookWorker({ repos: h.deps.repos, clock: h.clock, logger: h.deps.logger, config: h.deps.config }, { pollIntervalMs: 1_000, concurrency: 1, poolSize: 20 }).runDue();
  // The pool is full of the flooding app, so the sender also read the most overdue of every other app: the alert
  // goes second (ties go to the oldest, then the flooding app has had its turn). Without it, after 20 of the backlog.
  expect(r.received.map((x) => x.id)).toEqual([backlog[0], alert, ...backlog.slice(1)]);
});

it('drops an app\'s oldest pending deliveries beyond WEBHOOK_MAX_PENDING_PER_APP, counted in the metrics and the webhook\'s status', async () => {
  const r = await receiver();
  const app = await appWithWebhooks(r.url, 2);
  const other = await appWithWebhooks(r.url, 1);
  const cap = 10;
  const deps = { ...h.deps, clock: h.clock, config: { ...h.deps.config, webhookDelivery: { ...h.deps.config.webhookDelivery, maxPendingPerApp: cap } } };
  const droppedTotal = async () => (await metrics.webhookPendingDropped.get()).values.reduce((sum, v) => sum + v.value, 0);
  const before = await droppedTotal();
  // Another app's pending deliveries are its own: never counted against this app's cap.
  await notifyOidcDenied(deps, { appId: other.appId, reason: 'other', subject: null });
  for (let i = 0; i < 8; i++) {
    await notifyOidcDenied(deps, { appId: app.appId, reason: `refusal-${i}`, subject: null });
    h.clock.advance(1_000);
  }
  const stored = await h.deps.db.collection<WebhookDeliveryDoc>('webhook_deliveries').find({ appId: app.appId }).sort({ createdAt: 1, _id: 1 }).toArray();
  expect(stored).toHaveLength(16);
  const reasonOf = (d: WebhookDeliveryDoc) => JSON.parse(d.body).data.reason;
  // The 6 beyond the cap are the oldest: the first 3 refusals' (two webhooks each), failed unsent.
  const dropped = stored.filter((d) => d.status === 'failed');
  expect(dropped.map(reasonOf).sort()).toEqual(['refusal-0', 'refusal-0', 'refusal-1', 'refusal-1', 'refusal-2', 'refusal-2']);
  for (const d of dropped) expect(d).toMatchObject({ attempts: 0, lastError: expect.stringContaining('WEBHOOK_MAX_PENDING_PER_APP') });
  expect(stored.filter((d) => d.status === 'pending')).toHaveLength(cap);
  expect(await h.deps.db.collection('webhook_deliveries').countDocuments({ appId: other.appId, status: 'pending' })).toBe(1);
  expect((await droppedTotal()) - before).toBe(6);

  const listed = (await readJson(await h.api(`/v1/apps/${app.appId}/webhooks`, { headers: bearer(app.owner) }))).data;
  expect(listed.map((w: any) => w.droppedDeliveries)).toEqual([3, 3]);
  for (const w of listed) expect(Date.parse(w.lastDroppedAt)).toBeGreaterThan(0);
  const otherListed = (await readJson(await h.api(`/v1/apps/${other.appId}/webhooks`, { headers: bearer(other.owner) }))).data;
  expect(otherListed).toEqual([expect.objectContaining({ droppedDeliveries: 0, lastDroppedAt: null })]);
  // None of the dropped is ever sent.
  await worker(4).runDue();
  const otherPending = await h.deps.db.collection<WebhookDeliveryDoc>('webhook_deliveries').find({ appId: other.appId }).toArray();
  const kept = [...stored.filter((d) => d.status === 'pending'), ...otherPending].map((d) => d._id);
  expect(r.received.map((x) => x.id).sort()).toEqual(kept.sort());
  expect(r.received.some((x) => dropped.some((d) => d._id === x.id))).toBe(false);
});

/** A receiver that sends its status line at once, then one body byte every 200 ms for `ms` before ending. */
async function trickler(ms: number): Promise<{ url: string; stop(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const drip = setInterval(() => res.write('.'), 200);
      setTimeout(() => {
        clearInterval(drip);
        res.end();
      }, ms);
      res.on('close', () => clearInterval(drip));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

it('fails an attempt not answered in full within WEBHOOK_ATTEMPT_TIMEOUT_MS, a late 200 and a trickled body alike', async () => {
  const deadlineMs = 1_000;
  const late = await receiver(1_500); // 200, half a second after the deadline
  const trickle = await trickler(2_500); // 200 at once, its body ending 1.5 s after the deadline
  const slow = await appWithWebhooks(late.url, 1);
  const dripping = await appWithWebhooks(trickle.url, 1);
  try {
    const [a] = await queue(slow, 1);
    const [b] = await queue(dripping, 1);
    const started = performance.now();
    await worker(2, deadlineMs).runDue();
    const elapsed = performance.now() - started;
    expect(late.received.map((x) => x.id)).toEqual([a]);
    const stored = await h.deps.db.collection<WebhookDeliveryDoc>('webhook_deliveries').find({ _id: { $in: [a, b] } }).sort({ _id: 1 }).toArray();
    // Both failed their first attempt and wait for the retry (30 s on the service clock), none counted delivered.
    for (const d of stored) {
      expect(d).toMatchObject({ status: 'pending', attempts: 1, lastError: expect.stringContaining(`${deadlineMs} ms`) });
      expect(d.nextAttemptAt.getTime() - h.clock.now().getTime()).toBe(30_000);
    }
    // The lanes were given back at the deadline, not when the receivers finished.
    expect(elapsed).toBeLessThan(1_450);
  } finally {
    await trickle.stop();
  }
});

it('removes every delivery past retention in one run, however many batches that takes', async () => {
  const app = { appId: 'app_retention', webhookIds: ['whk_retention'] };
  // A run used to stop after 40 batches (20k deliveries an hour, while one app can queue 36k: 60 threat.opened per
  // webhook and minute, 10 webhooks). Small batches here, so that the test needs more than 40 of them and stays quick.
  const batch = 50;
  const old = 41 * batch + 7;
  const queuedAt = new Date(h.clock.now().getTime() - DELIVERY_RETENTION_MS - 3600_000);
  const doc = (i: number): WebhookDeliveryDoc => ({
    _id: `whd_old${String(i).padStart(8, '0')}`,
    appId: app.appId,
    webhookId: app.webhookIds[0],
    type: 'oidc.denied',
    body: '{}',
    status: 'delivered',
    attempts: 1,
    nextAttemptAt: queuedAt,
    lastAttemptAt: queuedAt,
    lastResponseStatus: 200,
    lastError: null,
    giveUpAt: queuedAt,
    createdAt: new Date(queuedAt.getTime() + i),
  });
  await h.deps.repos.webhookDeliveries.insert(Array.from({ length: old }, (_, i) => doc(i)));
  const [recent] = await queue(app, 1);
  expect(await createWebhookRetention(h.deps, { batch }).runOnce()).toBeGreaterThanOrEqual(old);
  const left = await h.deps.db.collection('webhook_deliveries').find({ appId: app.appId }, { projection: { _id: 1 } }).toArray();
  expect(left.map((d) => d._id)).toEqual([recent]);
});

it('delivers another app\'s first alert within one attempt\'s deadline while an app\'s slow receivers hold every lane', async () => {
  const deadlineMs = h.deps.config.webhookDelivery.attemptTimeoutMs;
  const slowReceiver = await receiver(4_500); // 200 after 4.5 s: under the breaker's 5 s, so nothing trips
  const fastReceiver = await receiver();
  const slow = await appWithWebhooks(slowReceiver.url, 10);
  const other = await appWithWebhooks(fastReceiver.url, 1);
  await queue(slow, 60);
  const run = worker(4).runDue();
  try {
    // Every lane is busy with the slow app before the other app's alert is queued.
    await until(() => slowReceiver.received.length >= 4, 5_000);
    const queuedAt = performance.now();
    await notifyOidcDenied(h.deps, { appId: other.appId, reason: 'fairness', subject: null });
    await until(() => fastReceiver.received.length === 1, deadlineMs + 5_000);
    const waited = fastReceiver.received[0].at - queuedAt;
    // One lane freeing (4.5 s) is the wait; behind the backlog it would be 56 / 4 x 4.5 s, about a minute.
    expect(waited).toBeLessThan(deadlineMs);
    expect(slowReceiver.received.length).toBeLessThan(60);
  } finally {
    // The rest of the backlog is not this test's: the lanes end with the attempts in hand.
    await h.deps.db.collection('webhook_deliveries').deleteMany({ appId: slow.appId, status: 'pending', attempts: 0 });
    await run;
  }
}, 60_000);

async function until(done: () => boolean, ms: number): Promise<void> {
  const end = performance.now() + ms;
  while (!done() && performance.now() < end) await new Promise((resolve) => setTimeout(resolve, 20));
}
