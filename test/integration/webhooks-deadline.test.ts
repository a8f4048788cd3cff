// Protects: a webhook attempt has one deadline, the worker's WEBHOOK_ATTEMPT_TIMEOUT_MS, kept by the sender itself
// for the whole exchange (docs/configuration.md, "Webhooks"). A receiver that sends its 200 status line at once and
// trickles its body past the deadline is not delivered: the attempt fails with "no complete answer within the
// attempt's N ms" and the status line it saw, and that is what the delivery records. A receiver that never answers
// fails at the same deadline, and one that hangs up mid-body is no delivery either.
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { startHarness, json, readJson, type Harness } from '../support/harness';
import { WebhookWorker } from '../../src/webhooks/delivery-worker';
import type { WebhookDeliveryDoc } from '../../src/data/webhook-deliveries-repo';
import { notifyOidcDenied } from '../../src/webhooks/enqueue';
import { sendSigned } from '../../src/webhooks/send';

type Answer = 'trickle' | 'silent' | 'hang-up' | 'whole';

/**
 * A receiver on loopback. 'trickle': 200 at once, then one body byte every 50 ms until the sender goes away;
 * 'silent': reads the request and never answers; 'hang-up': 200 with a promised 100-byte body, 10 bytes, then the
 * connection is cut; 'whole': 200 with its body, at once. `closed` resolves when the sender's connection is gone.
 */
async function receiver(answer: Answer) {
  let gone!: () => void;
  const closed = new Promise<void>((resolve) => (gone = resolve));
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.on('close', gone);
      if (answer === 'silent') return;
      if (answer === 'whole') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('received');
      if (answer === 'hang-up') {
        res.writeHead(200, { 'content-length': '100' });
        res.write('0123456789', () => res.socket?.destroy());
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.flushHeaders();
      const drip = setInterval(() => res.write('.'), 50);
      res.on('close', () => clearInterval(drip));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    closed,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let h: Harness;
const stops: (() => Promise<void>)[] = [];
beforeAll(async () => {
  h = await startHarness({ env: { WEBHOOK_ALLOW_INSECURE_LOOPBACK: '1' } });
});
afterAll(async () => {
  for (const stop of stops) await stop().catch(() => undefined);
  await h.close();
});

async function started(answer: Answer) {
  const r = await receiver(answer);
  stops.push(r.stop);
  return r;
}

const send = (url: string, deadlineMs: number) => sendSigned(url, { 'webhook-id': 'msg_deadline' }, '{}', { deadlineMs, allowLoopback: true });

it('fails an exchange whose 200 came at once but whose body trickles past the deadline, and ends the connection', async () => {
  const r = await started('trickle');
  expect(await send(r.url, 400)).toEqual({ ok: false, status: 200, error: "no complete answer within the attempt's 400 ms" });
  // The sender went away at its deadline: the receiver's response ends without the sender having read it to its end.
  await r.closed;
});

it('fails an exchange that gets no status line within the deadline', async () => {
  const r = await started('silent');
  expect(await send(r.url, 300)).toEqual({ ok: false, status: null, error: "no complete answer within the attempt's 300 ms" });
  await r.closed;
});

it('fails an exchange whose answer is cut off before its body ends, and delivers a whole one', async () => {
  const cut = await started('hang-up');
  expect(await send(cut.url, 5_000)).toEqual({ ok: false, status: 200, error: expect.stringContaining('ended before its body') });
  const whole = await started('whole');
  expect(await send(whole.url, 5_000)).toEqual({ ok: true, status: 200, error: null });
});

it('records a delivery whose receiver trickles its body past WEBHOOK_ATTEMPT_TIMEOUT_MS as a failed attempt with the status it saw', async () => {
  const deadlineMs = 500;
  const r = await started('trickle');
  const { appId } = await h.newApp('enterprise');
  const owner = (await h.newKey(appId, ['rules:write', 'rules:read'])).key;
  const created = await h.api(`/v1/apps/${appId}/webhooks`, { method: 'POST', headers: json(owner), body: JSON.stringify({ url: r.url, events: ['oidc.denied'] }) });
  expect(created.status).toBe(201);
  const webhookId = (await readJson(created)).id;
  await notifyOidcDenied(h.deps, { appId, reason: 'deadline', subject: null });
  const config = { ...h.deps.config, webhookDelivery: { ...h.deps.config.webhookDelivery, attemptTimeoutMs: deadlineMs } };
  const worker = new WebhookWorker({ repos: h.deps.repos, clock: h.clock, logger: h.deps.logger, config }, { pollIntervalMs: 1_000, concurrency: 1 });
  expect(await worker.runDue()).toBe(1);
  const [delivery] = await h.deps.db.collection<WebhookDeliveryDoc>('webhook_deliveries').find({ appId, webhookId }).toArray();
  expect(delivery).toMatchObject({
    status: 'pending',
    attempts: 1,
    lastResponseStatus: 200,
    lastError: `no complete answer within the attempt's ${deadlineMs} ms`,
  });
  await r.closed;
});
