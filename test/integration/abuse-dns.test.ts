// Protects: webhook host names are resolved through c-ares (src/webhooks/resolve-host.ts), never dns.lookup, whose
// getaddrinfo holds one of libuv's four thread-pool threads per name until the system resolver gives up: a tenant's
// zone that never answers would then stall file writes service-wide. Here the configured name server
// (WEBHOOK_DNS_SERVERS) is a UDP socket on loopback that reads every query and answers none, while 30 deliveries
// wait on it: uploads (written to the filesystem store through the thread pool) keep their latency, and every
// delivery fails with a timeout as its reason.
import dgram from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { startHarness, json, type Harness } from '../support/harness';
import { WebhookWorker } from '../../src/webhooks/delivery-worker';
import { WebhookDeliveriesRepo } from '../../src/data/webhook-deliveries-repo';
import { event, ingest } from './threats-support';
import { artifactBytes, createBuildWithArtifact, put } from './uploads-support';

const APPS = 3;
const WEBHOOKS_PER_APP = 10;
const ZONE = 'never-answers.test';

/** The question name of a DNS query (RFC 1035 4.1.2: length-prefixed labels from byte 12). */
function questionName(packet: Buffer): string {
  const labels: string[] = [];
  for (let at = 12; at < packet.length && packet[at] !== 0 && labels.length < 64; at += packet[at] + 1) {
    labels.push(packet.subarray(at + 1, at + 1 + packet[at]).toString('latin1'));
  }
  return labels.join('.');
}

let h: Harness;
let silent: dgram.Socket;
const asked: string[] = [];
beforeAll(async () => {
  silent = dgram.createSocket('udp4');
  silent.on('message', (packet) => asked.push(questionName(packet)));
  await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
  const port = (silent.address() as AddressInfo).port;
  h = await startHarness({
    jobs: false,
    env: { WEBHOOK_DNS_SERVERS: `127.0.0.1:${port}`, WEBHOOK_DNS_TIMEOUT_MS: '1500', WEBHOOK_ALLOW_INSECURE_LOOPBACK: '1' },
  });
});
afterAll(async () => {
  await h.close();
  silent.close();
});

async function uploadTimes(key: string, n: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const { bytes, sha256 } = artifactBytes(512 * 1024);
    const build = await createBuildWithArtifact(h, key, bytes, sha256);
    const started = performance.now();
    const res = await put(build.artifact.uploadUrl, bytes);
    times.push(performance.now() - started);
    expect(res.status).toBe(200);
  }
  return times;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

it(`keeps uploads at their latency while ${APPS * WEBHOOKS_PER_APP} deliveries wait on a name server that never answers, and fails each with a timeout`, async () => {
  const { appId: ciApp } = await h.newApp('enterprise');
  const ciKey = (await h.newKey(ciApp, ['builds:write', 'builds:read'])).key;
  await uploadTimes(ciKey, 2); // warm up (the signing key, the store's folders)
  const before = await uploadTimes(ciKey, 8);

  for (let a = 0; a < APPS; a++) {
    const { appId } = await h.newApp('enterprise');
    const owner = (await h.newKey(appId, ['rules:write'])).key;
    const device = (await h.newKey(appId, ['events:ingest'])).key;
    for (let w = 0; w < WEBHOOKS_PER_APP; w++) {
      const res = await h.api(`/v1/apps/${appId}/webhooks`, {
        method: 'POST',
        headers: json(owner),
        body: JSON.stringify({ url: `https://hook-${a}-${w}.${ZONE}/alerts`, events: ['threat.opened'] }),
      });
      expect(res.status).toBe(201);
    }
    expect((await ingest(h.baseUrl, device, [event(h.clock.now(), { detection: 'root_jailbreak', deviceId: `device-dns-${a}` })])).status).toBe(202);
  }

  // Every delivery at once: far more lookups in flight than libuv's four threads.
  const worker = new WebhookWorker({ repos: h.deps.repos, clock: h.clock, logger: h.deps.logger, config: h.deps.config }, { pollIntervalMs: 60_000, concurrency: APPS * WEBHOOKS_PER_APP });
  const sending = worker.runDue();
  for (let i = 0; i < 100 && new Set(asked).size < APPS * WEBHOOKS_PER_APP; i++) await new Promise((r) => setTimeout(r, 20));
  const during = await uploadTimes(ciKey, 8);
  const made = await sending;

  expect(made).toBe(APPS * WEBHOOKS_PER_APP);
  // The names were asked of the configured server (c-ares, not the system's resolver through getaddrinfo).
  expect(new Set(asked.filter((name) => name.endsWith(ZONE))).size).toBe(APPS * WEBHOOKS_PER_APP);
  // Normal latency: within three times the median before (or 250 ms on a fast machine, where a few ms are noise).
  expect(median(during)).toBeLessThan(Math.max(3 * median(before), 250));
  const deliveries = await h.deps.db.collection(WebhookDeliveriesRepo.collectionName).find({}).toArray();
  expect(deliveries).toHaveLength(APPS * WEBHOOKS_PER_APP);
  for (const d of deliveries) {
    expect(d).toMatchObject({ status: 'pending', attempts: 1, lastResponseStatus: null });
    expect(d.lastError).toMatch(/^DNS resolution of the host timed out after \d+\.\d s$/);
  }
});
