// Protects: webhooks under /v1/apps/{id}/webhooks (docs/contract.md, "Webhooks"): create (rules:write) 201
// with the secret shown once, list (rules:read) without it but with the last deliveries, delete 204; https only
// (http://127.0.0.1 only with WEBHOOK_ALLOW_INSECURE_LOOPBACK), at most 10 per app; a new threat at or above
// minVerdict is delivered to a real receiver on loopback as a Standard Webhooks signed POST the receiver verifies; a
// receiver that is down is retried with back-off (on the service clock) until it recovers; a receiver that hangs does
// not hold up ingestion; a delivery to a private address is refused without a connection; a spike alert fires once;
// oidc.denied follows the audit trail's aggregation and carries no token; scan.completed only below gradeBelow;
// deliveries are removed after 30 days; a host name is connected to at the address that was checked.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { startHarness, bearer, json, readJson, type Harness } from '../support/harness';
import { BREAKER_FAILURES, breakerOpenMs, WebhookWorker } from '../../src/webhooks/delivery-worker';
import { event, ingest, after } from './threats-support';
import { DELIVERY_WINDOW_MS, notifyScanCompleted, OPENED_PER_MINUTE } from '../../src/webhooks/enqueue';
import { createWebhookRetention } from '../../src/jobs/webhook-retention';
import { resolveAllowed, sendSigned } from '../../src/webhooks/send';

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver on loopback; `mode` decides its answer. `stop()`/`listen()` take it down and back on one port. */
class Receiver {
  received: Received[] = [];
  mode: 'ok' | 'error' | 'hang' = 'ok';
  private hanging: http.ServerResponse[] = [];
  private server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      this.received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      if (this.mode === 'hang') return void this.hanging.push(res);
      res.writeHead(this.mode === 'ok' ? 204 : 503).end();
    });
  });
  port = 0;
  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }
  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
  release(): void {
    for (const res of this.hanging.splice(0)) res.writeHead(200).end();
  }
  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }
}

/** Verification as a receiver does it, following the Standard Webhooks specification (tolerance: 5 minutes). */
function verify(secret: string, r: Received, nowSeconds: number): boolean {
  const id = String(r.headers['webhook-id']);
  const timestamp = String(r.headers['webhook-timestamp']);
  if (Math.abs(nowSeconds - Number(timestamp)) > 300) return false;
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${r.body}`).digest();
  return String(r.headers['webhook-signature'])
    .split(' ')
    .some((sig) => {
      const [version, value] = sig.split(',');
      const given = Buffer.from(value ?? '', 'base64');
      return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
    });
}

let h: Harness;
let worker: WebhookWorker;
const receivers: Receiver[] = [];
beforeAll(async () => {
  h = await startHarness({ env: { WEBHOOK_ALLOW_INSECURE_LOOPBACK: '1' } });
  worker = new WebhookWorker({ repos: h.deps.repos, clock: h.clock, logger: h.deps.logger, config: h.deps.config });
});
afterAll(async () => {
  for (const r of receivers) await r.stop().catch(() => undefined);
  await h.close();
});

async function receiver(): Promise<Receiver> {
  const r = new Receiver();
  await r.listen();
  receivers.push(r);
  return r;
}

async function ownedApp() {
  const { appId } = await h.newApp('enterprise');
  return {
    appId,
    owner: (await h.newKey(appId, ['rules:write', 'rules:read'])).key,
    device: (await h.newKey(appId, ['events:ingest'])).key,
  };
}

const create = (appId: string, key: string, body: unknown) =>
  h.api(`/v1/apps/${appId}/webhooks`, { method: 'POST', headers: json(key), body: JSON.stringify(body) });
const list = async (appId: string, key: string) => {
  const res = await h.api(`/v1/apps/${appId}/webhooks`, { headers: bearer(key) });
  return { status: res.status, text: await res.text() };
};
const nowSeconds = () => Math.floor(h.clock.now().getTime() / 1000);

it('creates a webhook with a generated secret shown once, lists it without the secret, and deletes it', async () => {
  const a = await ownedApp();
  const res = await create(a.appId, a.owner, { url: 'https://alerts.example.com/shieldgate', events: ['threat.opened'] });
  expect(res.status).toBe(201);
  expect(res.headers.get('cache-control')).toBe('no-store');
  const created = await readJson(res);
  expect(created).toMatchObject({ appId: a.appId, url: 'https://alerts.example.com/shieldgate', events: ['threat.opened'], minVerdict: 'compromised', spikeThreshold: 100, gradeBelow: 'C', deliveries: [] });
  expect(Buffer.from(created.secret.slice(6), 'base64').length).toBe(32);
  expect(created.secret.startsWith('whsec_')).toBe(true);

  const listed = await list(a.appId, a.owner);
  expect(listed.status).toBe(200);
  expect(listed.text).not.toContain(created.secret.slice(6));
  expect(JSON.parse(listed.text).data.map((w: any) => w.id)).toEqual([created.id]);
  // Nor is it stored in the clear where a database reader would find it as given.
  const stored = await h.deps.db.collection('webhooks').findOne({ _id: created.id });
  expect(JSON.stringify(stored)).not.toContain(created.secret.slice(6));

  const other = await ownedApp();
  expect((await h.api(`/v1/apps/${a.appId}/webhooks/${created.id}`, { method: 'DELETE', headers: bearer(other.owner) })).status).toBe(404);
  expect((await h.api(`/v1/apps/${a.appId}/webhooks/${created.id}`, { method: 'DELETE', headers: bearer(a.owner) })).status).toBe(204);
  expect((await h.api(`/v1/apps/${a.appId}/webhooks/${created.id}`, { method: 'DELETE', headers: bearer(a.owner) })).status).toBe(404);
  expect(JSON.parse((await list(a.appId, a.owner)).text).data).toEqual([]);
});

it('refuses http (other than loopback under the test flag), bad secrets, missing scopes and an eleventh webhook', async () => {
  const a = await ownedApp();
  const refused = await create(a.appId, a.owner, { url: 'http://alerts.example.com/x', events: ['threat.opened'] });
  expect(refused.status).toBe(422);
  expect((await readJson(refused)).errors).toEqual([expect.objectContaining({ pointer: '/url' })]);
  const shortSecret = await create(a.appId, a.owner, { url: 'https://a.example.com/x', events: ['oidc.denied'], secret: `whsec_${Buffer.alloc(16, 7).toString('base64')}` });
  expect(shortSecret.status).toBe(422);
  const reader = (await h.newKey(a.appId, ['rules:read'])).key;
  expect((await create(a.appId, reader, { url: 'https://a.example.com/x', events: ['oidc.denied'] })).status).toBe(403);
  for (let i = 0; i < 10; i++) expect((await create(a.appId, a.owner, { url: `https://a.example.com/${i}`, events: ['oidc.denied'] })).status).toBe(201);
  const eleventh = await create(a.appId, a.owner, { url: 'https://a.example.com/11', events: ['oidc.denied'] });
  expect(eleventh.status).toBe(422);
});

it('delivers a new compromised threat, signed as Standard Webhooks specifies, and not a suspicious one', async () => {
  const a = await ownedApp();
  const r = await receiver();
  const secret = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
  const created = await readJson(await create(a.appId, a.owner, { url: r.url, events: ['threat.opened'], secret }));
  expect(created.secret).toBe(secret);

  const t0 = h.clock.now();
  // With an eventId the event is counted by a merge record, not by the window: the alert still says one occurrence.
  expect((await ingest(h.baseUrl, a.device, [event(t0, { eventId: 'evt-webhook-0001' }), event(t0, { verdict: 'suspicious', detection: 'debugger' })])).status).toBe(202);
  expect(await worker.runDue()).toBe(1);
  expect(r.received).toHaveLength(1);
  const [delivery] = r.received;
  expect(verify(secret, delivery, nowSeconds())).toBe(true);
  expect(verify(`whsec_${Buffer.alloc(32, 8).toString('base64')}`, delivery, nowSeconds())).toBe(false);
  expect(delivery.headers['content-type']).toBe('application/json');
  const body = JSON.parse(delivery.body);
  expect(body).toMatchObject({ type: 'threat.opened', data: { appId: a.appId, detection: 'hooking', verdict: 'compromised', occurredAt: t0.toISOString(), count: 1 } });
  expect(body.data.id).toMatch(/^thr_/);
  expect(new Date(body.timestamp).getTime()).toBe(t0.getTime());
  // The data is the Threat as REST lists it, field for field, plus appId (one REST Threat for both).
  const reader = (await h.newKey(a.appId, ['threats:read'])).key;
  const threats = await readJson(await h.api(`/v1/apps/${a.appId}/threats?detection=hooking`, { headers: bearer(reader) }));
  expect(body.data).toEqual({ appId: a.appId, ...threats.data[0] });

  // A repeat of the same event merges into the open threat: no second alert.
  await ingest(h.baseUrl, a.device, [event(after(t0, 1000))]);
  expect(await worker.runDue()).toBe(0);

  const listed = JSON.parse((await list(a.appId, a.owner)).text).data[0];
  expect(listed.deliveries).toEqual([expect.objectContaining({ id: delivery.headers['webhook-id'], type: 'threat.opened', status: 'delivered', attempts: 1, nextAttemptAt: null, lastResponseStatus: 204 })]);
});

it('retries a receiver that is down with back-off on the service clock, and delivers once it recovers', async () => {
  const a = await ownedApp();
  const r = await receiver();
  const { secret } = await readJson(await create(a.appId, a.owner, { url: r.url, events: ['threat.opened'] }));
  await r.stop(); // connection refused
  await ingest(h.baseUrl, a.device, [event(h.clock.now(), { detection: 'tamper' })]);
  expect(await worker.runDue()).toBe(1);
  let [d] = JSON.parse((await list(a.appId, a.owner)).text).data[0].deliveries;
  expect(d).toMatchObject({ status: 'pending', attempts: 1, lastResponseStatus: null });
  const firstRetry = new Date(d.nextAttemptAt).getTime() - h.clock.now().getTime();
  expect(firstRetry).toBe(30_000);
  expect(await worker.runDue()).toBe(0); // not due yet

  await r.listen(); // back on the same port, answering 503
  r.mode = 'error';
  h.clock.advance(firstRetry);
  expect(await worker.runDue()).toBe(1);
  [d] = JSON.parse((await list(a.appId, a.owner)).text).data[0].deliveries;
  expect(d).toMatchObject({ status: 'pending', attempts: 2, lastResponseStatus: 503 });
  expect(new Date(d.nextAttemptAt).getTime() - h.clock.now().getTime()).toBe(60_000); // doubled

  r.mode = 'ok';
  h.clock.advance(60_000);
  expect(await worker.runDue()).toBe(1);
  [d] = JSON.parse((await list(a.appId, a.owner)).text).data[0].deliveries;
  expect(d).toMatchObject({ status: 'delivered', attempts: 3, lastResponseStatus: 204, nextAttemptAt: null });
  // Every attempt carried the same webhook-id (the receiver's idempotency key), each freshly signed.
  expect(new Set(r.received.map((x) => x.headers['webhook-id'])).size).toBe(1);
  expect(verify(secret, r.received[r.received.length - 1], nowSeconds())).toBe(true);
});

it('gives up after 24 hours of failures', async () => {
  const a = await ownedApp();
  const r = await receiver();
  r.mode = 'error';
  await create(a.appId, a.owner, { url: r.url, events: ['threat.opened'] });
  await ingest(h.baseUrl, a.device, [event(h.clock.now(), { detection: 'overlay' })]);
  let attempts = 0;
  for (let i = 0; i < 60; i++) {
    attempts += await worker.runDue();
    h.clock.advance(3600_000);
  }
  const [d] = JSON.parse((await list(a.appId, a.owner)).text).data[0].deliveries;
  expect(d).toMatchObject({ status: 'failed', nextAttemptAt: null, lastResponseStatus: 503 });
  expect(d.attempts).toBe(attempts);
  // 30 s, 1, 2, 4, 8, 16, 32 min, then hourly: about 30 attempts in 24 hours, none after.
  expect(attempts).toBeGreaterThan(20);
  expect(attempts).toBeLessThan(30);
});

it('keeps ingesting while a receiver hangs', async () => {
  const a = await ownedApp();
  const r = await receiver();
  r.mode = 'hang';
  await create(a.appId, a.owner, { url: r.url, events: ['threat.opened'] });
  await ingest(h.baseUrl, a.device, [event(h.clock.now(), { detection: 'emulator' })]);
  const sending = worker.runDue();
  while (r.received.length === 0) await new Promise((resolve) => setImmediate(resolve));
  // The receiver holds the request: ingestion still answers, and opens (and queues) the next threat.
  const answer = await ingest(h.baseUrl, a.device, [event(h.clock.now(), { detection: 'screen_capture' })]);
  expect(answer.status).toBe(202);
  expect(answer.body.accepted).toBe(1);
  r.mode = 'ok';
  r.release();
  await sending;
  const deliveries = JSON.parse((await list(a.appId, a.owner)).text).data[0].deliveries;
  expect(deliveries.map((d: any) => d.status).sort()).toEqual(['delivered', 'delivered']);
});

it('refuses to deliver to a private address, without connecting', async () => {
  const a = await ownedApp();
  await create(a.appId, a.owner, { url: 'https://10.0.0.1/hooks', events: ['threat.opened'] });
  await create(a.appId, a.owner, { url: 'https://169.254.169.254/latest/meta-data', events: ['threat.opened'] });
  await ingest(h.baseUrl, a.device, [event(h.clock.now(), { detection: 'remote_access' })]);
  expect(await worker.runDue()).toBe(2);
  const stored = await h.deps.db.collection('webhook_deliveries').find({ appId: a.appId }).toArray();
  expect(stored.map((d) => d.lastError)).toEqual([expect.stringContaining('non-public address'), expect.stringContaining('non-public address')]);
  expect(stored.every((d) => d.status === 'pending' && d.lastResponseStatus === null)).toBe(true);
});

it('sends one spike alert when a detection crosses the threshold within a 5-minute bucket', async () => {
  const a = await ownedApp();
  const r = await receiver();
  await create(a.appId, a.owner, { url: r.url, events: ['threat.spike'], spikeThreshold: 3 });
  const batch = (n: number, from: number) => Array.from({ length: n }, (_, i) => event(h.clock.now(), { detection: 'accessibility_abuse', deviceId: `device-spike-${from + i}` }));
  await ingest(h.baseUrl, a.device, batch(3, 0)); // at the threshold: no alert
  expect(await worker.runDue()).toBe(0);
  await ingest(h.baseUrl, a.device, batch(2, 3)); // over it
  await ingest(h.baseUrl, a.device, batch(2, 5)); // still over: no second alert
  expect(await worker.runDue()).toBe(1);
  expect(JSON.parse(r.received[0].body)).toMatchObject({ type: 'threat.spike', data: { appId: a.appId, detection: 'accessibility_abuse', count: 5, threshold: 3 } });
});

it('alerts on a refused CI token exchange once per app, reason and minute, never with the token', async () => {
  const a = await ownedApp();
  const r = await receiver();
  await create(a.appId, a.owner, { url: r.url, events: ['oidc.denied'] });
  const token = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJyZXBvOmFjbWUvYXBwIn0.bm90LWEtc2lnbmF0dXJl';
  const exchange = () => h.api('/v1/auth/oidc', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token, appId: a.appId }) });
  expect((await exchange()).status).toBe(401);
  expect((await exchange()).status).toBe(401);
  expect(await worker.runDue()).toBe(1);
  const body = JSON.parse(r.received[0].body);
  expect(body).toMatchObject({ type: 'oidc.denied', data: { appId: a.appId, subject: null } });
  expect(typeof body.data.reason).toBe('string');
  expect(r.received[0].body).not.toContain(token.split('.')[1]);
});

it('alerts on a static scan graded below gradeBelow only', async () => {
  const a = await ownedApp();
  const r = await receiver();
  await create(a.appId, a.owner, { url: r.url, events: ['scan.completed'], gradeBelow: 'B' });
  const scan = (grade: string) => notifyScanCompleted({ repos: h.deps.repos, clock: h.clock, logger: h.deps.logger, instance: h.deps.instance }, { appId: a.appId, scanId: `scn_${grade}`, buildId: 'bld_x', grade, score: 50 });
  await scan('B'); // not below
  await scan('A-');
  await scan('C+');
  expect(await worker.runDue()).toBe(1);
  expect(JSON.parse(r.received[0].body)).toMatchObject({ type: 'scan.completed', data: { appId: a.appId, id: 'scn_C+', grade: 'C+' } });
});

it('queues a scan\'s scan.completed once per webhook however many attempts of its job queue it', async () => {
  // An instance can die after writing the scan and before queueing; the retry queues again, and the derived
  // delivery id keeps it to one delivery.
  const a = await ownedApp();
  const r = await receiver();
  await create(a.appId, a.owner, { url: r.url, events: ['scan.completed'], gradeBelow: 'B' });
  const deps = { repos: h.deps.repos, clock: h.clock, logger: h.deps.logger, instance: h.deps.instance };
  for (let attempt = 0; attempt < 3; attempt++) await notifyScanCompleted(deps, { appId: a.appId, scanId: 'scn_retried', buildId: 'bld_x', grade: 'D', score: 40 });
  await notifyScanCompleted(deps, { appId: a.appId, scanId: 'scn_other', buildId: 'bld_y', grade: 'D', score: 40 });
  expect(await worker.runDue()).toBe(2);
  expect(r.received.map((x) => JSON.parse(x.body).data.id).sort()).toEqual(['scn_other', 'scn_retried']);
});

it('removes deliveries after 30 days and spike counters once spent', async () => {
  const a = await ownedApp();
  const r = await receiver();
  await create(a.appId, a.owner, { url: r.url, events: ['threat.opened', 'threat.spike'], spikeThreshold: 1000 });
  await ingest(h.baseUrl, a.device, [event(h.clock.now(), { detection: 'root_jailbreak', deviceId: 'device-retention-1' })]);
  await worker.runDue();
  const deliveries = h.deps.db.collection('webhook_deliveries');
  const counters = h.deps.db.collection('webhook_spike_counters');
  expect(await deliveries.countDocuments({ appId: a.appId })).toBe(1);
  expect(await counters.countDocuments({ _id: { $regex: `^${a.appId}:` } } as any)).toBe(1);
  const sweep = createWebhookRetention(h.deps);
  h.clock.advance(29 * 86_400_000);
  await sweep.runOnce();
  expect(await deliveries.countDocuments({ appId: a.appId })).toBe(1); // still shown to the owner
  expect(await counters.countDocuments({ _id: { $regex: `^${a.appId}:` } } as any)).toBe(0); // spent after a day
  h.clock.advance(2 * 86_400_000);
  await sweep.runOnce();
  expect(await deliveries.countDocuments({ appId: a.appId })).toBe(0);
});

it('connects to the address it checked when the URL names a host', async () => {
  // "localhost" resolves through the hosts file (no network); the request must reach the loopback receiver through
  // the pinned lookup, and the same name without the loopback allowance is refused before any connection.
  const r = await receiver();
  const url = `http://localhost:${r.port}/hooks`;
  expect(await resolveAllowed('localhost', true)).toEqual({ address: '127.0.0.1', family: 4 }); // the hosts file's first answer
  expect(await sendSigned(url, { 'webhook-id': 'msg_pinned' }, '{}', { deadlineMs: 10_000, allowLoopback: true })).toEqual({ ok: true, status: 204, error: null });
  const refused = await sendSigned(url, { 'webhook-id': 'msg_refused' }, '{}', { deadlineMs: 10_000, allowLoopback: false });
  expect(refused).toEqual({ ok: false, status: null, error: expect.stringContaining('non-public address') });
  expect(r.received.map((x) => x.headers['webhook-id'])).toEqual(['msg_pinned']);
});

it('records an unreadable stored secret as a failed attempt, so the delivery still ends within its 24 hours', async () => {
  const a = await ownedApp();
  const r = await receiver();
  const { id } = await readJson(await create(a.appId, a.owner, { url: r.url, events: ['threat.opened'] }));
  // As if sealed under a KEY_ENCRYPTION_KEY this instance does not have.
  await h.deps.db.collection('webhooks').updateOne({ _id: id } as any, { $set: { secret: { alg: 'A256GCM', iv: 'AAAAAAAAAAAAAAAA', data: 'AAAA', tag: 'AAAAAAAAAAAAAAAAAAAAAA' } } });
  await ingest(h.baseUrl, a.device, [event(h.clock.now(), { detection: 'debugger', deviceId: 'device-sealed-1' })]);
  expect(await worker.runDue()).toBe(1);
  const [d] = JSON.parse((await list(a.appId, a.owner)).text).data[0].deliveries;
  expect(d).toMatchObject({ status: 'pending', attempts: 1, lastResponseStatus: null });
  expect(new Date(d.nextAttemptAt).getTime() - h.clock.now().getTime()).toBe(30_000);
  expect(r.received).toHaveLength(0);
});

it('queues at most OPENED_PER_MINUTE threat.opened deliveries per webhook and minute, whoever opens the threats', async () => {
  const a = await ownedApp();
  const r = await receiver();
  const { id } = await readJson(await create(a.appId, a.owner, { url: r.url, events: ['threat.opened'] }));
  // Devices hold the ingestion key: a wave of threats from 200 "devices" in one minute.
  const wave = (tag: string) => Array.from({ length: 100 }, (_, i) => event(h.clock.now(), { detection: 'hooking', deviceId: `device-wave-${tag}-${i}` }));
  expect((await ingest(h.baseUrl, a.device, wave('a'))).body.accepted).toBe(100);
  expect((await ingest(h.baseUrl, a.device, wave('b'))).body.accepted).toBe(100);
  const queued = () => h.deps.db.collection('webhook_deliveries').countDocuments({ appId: a.appId, type: 'threat.opened' });
  expect(await queued()).toBe(OPENED_PER_MINUTE);
  h.clock.advance(60_000); // the next minute has room again
  await ingest(h.baseUrl, a.device, wave('c'));
  expect(await queued()).toBe(2 * OPENED_PER_MINUTE);
  // Deleting the webhook drops what it had queued (and keeps it out of the next tests' queue).
  expect((await h.api(`/v1/apps/${a.appId}/webhooks/${id}`, { method: 'DELETE', headers: bearer(a.owner) })).status).toBe(204);
  expect(await queued()).toBe(0);
});

it('puts a failing webhook\'s deliveries back while its breaker is open, so other apps\' alerts still go out', async () => {
  const lone = new WebhookWorker({ repos: h.deps.repos, clock: h.clock, logger: h.deps.logger, config: h.deps.config }, { pollIntervalMs: 1_000, concurrency: 1 });
  const bad = await ownedApp();
  const good = await ownedApp();
  const down = await receiver();
  down.mode = 'error';
  const up = await receiver();
  await create(bad.appId, bad.owner, { url: down.url, events: ['threat.opened'] });
  await create(good.appId, good.owner, { url: up.url, events: ['threat.opened'] });
  await ingest(h.baseUrl, bad.device, Array.from({ length: BREAKER_FAILURES + 3 }, (_, i) => event(h.clock.now(), { detection: 'tamper', deviceId: `device-breaker-${i}` })));
  await lone.runDue();
  expect(down.received).toHaveLength(BREAKER_FAILURES); // then the breaker opened: the other 3 were put back unsent
  const stored = await h.deps.db.collection('webhook_deliveries').find({ appId: bad.appId }).toArray();
  const waiting = stored.filter((d) => d.attempts === 0);
  expect(waiting).toHaveLength(3);
  for (const d of waiting) expect(d.nextAttemptAt.getTime() - h.clock.now().getTime()).toBe(breakerOpenMs(BREAKER_FAILURES));
  // Put back in one update when the breaker opened, not claimed and put back one by one: a backlog of thousands would
  // otherwise hold every sender at each breaker window, and a sender whose own breaker is closed would send them.
  for (const d of waiting) expect(d.lastAttemptAt).toBeNull();
  const other = new WebhookWorker({ repos: h.deps.repos, clock: h.clock, logger: h.deps.logger, config: h.deps.config }, { pollIntervalMs: 1_000, concurrency: 1 });
  expect(await other.runDue()).toBe(0);
  expect(down.received).toHaveLength(BREAKER_FAILURES);

  await ingest(h.baseUrl, good.device, [event(h.clock.now(), { detection: 'tamper', deviceId: 'device-breaker-good' })]);
  await lone.runDue();
  expect(up.received).toHaveLength(1);
  expect(down.received).toHaveLength(BREAKER_FAILURES);

  down.mode = 'ok'; // recovers: once the breaker's minute is over, one attempt succeeds and the rest follow
  h.clock.advance(breakerOpenMs(BREAKER_FAILURES));
  await lone.runDue();
  const after = await h.deps.db.collection('webhook_deliveries').find({ appId: bad.appId }).toArray();
  expect(after.map((d) => d.status)).toEqual(Array(BREAKER_FAILURES + 3).fill('delivered'));
});

it('does not send a delivery claimed after its 24 hours', async () => {
  const a = await ownedApp();
  const r = await receiver();
  await create(a.appId, a.owner, { url: r.url, events: ['threat.opened'] });
  await ingest(h.baseUrl, a.device, [event(h.clock.now(), { detection: 'overlay', deviceId: 'device-too-late' })]);
  h.clock.advance(DELIVERY_WINDOW_MS + 60_000); // a backlog kept it queued past its window
  await worker.runDue();
  const [d] = JSON.parse((await list(a.appId, a.owner)).text).data[0].deliveries;
  expect(d).toMatchObject({ status: 'failed', lastResponseStatus: null });
  expect(r.received).toHaveLength(0);
});
