/**
 * The soak's reckoning (test/soak/reckon.ts) finds what was lost: run against a real service, database and store,
 * it counts nothing lost where nothing was, and names each loss it is shown (an acknowledged event the service never
 * counted, an object gone from the store, an upload never stored nor scanned, a 500 answer). A reckoning that could
 * not fail would make the soak's "0 lost" meaningless.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { DeleteObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startHarness, s3StoreEnv, type Harness } from '../support/harness';
import { Balancer } from '../soak/balancer';
import { Ledger } from '../soak/ledger';
import { drainAndReckon, type Check, type StoredState } from '../soak/reckon';
import type { Tenant } from '../soak/tenants';

jest.setTimeout(120_000);

let h: Harness;
let stored: StoredState;
let tenant: Tenant;

/** Each test reckons an app of its own, so that its counts are its events only. */
beforeEach(async () => {
  const { appId } = await h.newApp();
  tenant = {
    appId,
    ciKey: (await h.newKey(appId, ['builds:write', 'builds:read'])).key,
    deviceKey: (await h.newKey(appId, ['events:ingest'])).key,
    readerKey: (await h.newKey(appId, ['threats:read'])).key,
    webhooks: new Map(),
  };
});

beforeAll(async () => {
  h = await startHarness({ env: s3StoreEnv('reckon') });
  const s3 = h.config.s3;
  stored = {
    mongoUri: process.env.TEST_MONGODB_URI!,
    database: h.config.mongodbDatabase,
    s3: { endpoint: s3.endpoint!, region: s3.region, accessKeyId: s3.credentials!.accessKeyId, secretAccessKey: s3.credentials!.secretAccessKey },
    bucket: s3.bucket,
  };
});
afterAll(() => h.close());

const byName = (checks: Check[]) => Object.fromEntries(checks.map((c) => [c.name, c.lost]));

async function sendEvents(balancer: Balancer, ledger: Ledger, n: number): Promise<void> {
  const events = Array.from({ length: n }, () => ({
    detection: 'hooking', verdict: 'suspicious', confidence: 0.5, action: 'warn', signals: ['reckon'],
    occurredAt: new Date().toISOString(), deviceId: `device-${randomBytes(4).toString('hex')}`, eventId: randomUUID(),
  }));
  const answer = await balancer.call('ingestEvents', '/v1/events', { method: 'POST', headers: { authorization: `Bearer ${tenant.deviceKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ events }) });
  expect(answer?.status).toBe(202);
  ledger.acknowledge(tenant.appId, events.map((e) => e.eventId));
}

/** Registers a build of random bytes; uploads them unless told not to. */
async function build(balancer: Balancer, upload: boolean): Promise<{ buildId: string; sha256: string; sizeBytes: number }> {
  const bytes = randomBytes(4096);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const created = await balancer.call('createBuild', '/v1/builds', {
    method: 'POST',
    headers: { authorization: `Bearer ${tenant.ciKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ platform: 'android', version: '1.0.0', artifact: { sizeBytes: bytes.length, sha256 } }),
  });
  expect(created?.status).toBe(201);
  const { id, artifact } = created!.json();
  if (upload) expect((await balancer.put(h.baseUrl, new URL(artifact.uploadUrl).pathname, bytes))?.status).toBe(200);
  return { buildId: id, sha256, sizeBytes: bytes.length };
}

test('nothing lost where nothing was: every check at 0', async () => {
  const ledger = new Ledger();
  const balancer = new Balancer([h.baseUrl], ledger);
  await sendEvents(balancer, ledger, 5);
  const uploaded = await build(balancer, true);
  ledger.uploads.push({ appId: tenant.appId, ...uploaded, answer: 200, cut: false });

  const { checks } = await drainAndReckon(stored, balancer, ledger, [tenant], Date.now() + 60_000);
  expect(checks.filter((c) => c.lost !== 0)).toEqual([]);
  expect(byName(checks)['every uploaded build with one static scan']).toBe(0);
});

test('each loss is named: an event never counted, an object gone, an upload never stored, a 500', async () => {
  const ledger = new Ledger();
  const balancer = new Balancer([h.baseUrl], ledger);
  await sendEvents(balancer, ledger, 3);
  // An id the clients believe acknowledged that the service never saw.
  ledger.acknowledge(tenant.appId, [randomUUID()]);
  // An upload answered 200 whose object then vanished from the store.
  const vanished = await build(balancer, true);
  ledger.uploads.push({ appId: tenant.appId, ...vanished, answer: 200, cut: false });
  // Scanned first: the loss is the object's only.
  while (!(await h.deps.db.collection('scans').findOne({ buildId: vanished.buildId, engine: 'static' }))) await new Promise((r) => setTimeout(r, 100));
  const doc = await h.deps.repos.builds.findById(tenant.appId, vanished.buildId);
  const s3 = new S3Client({ endpoint: stored.s3.endpoint, region: stored.s3.region, forcePathStyle: true, credentials: stored.s3 });
  await s3.send(new DeleteObjectCommand({ Bucket: stored.bucket, Key: doc!.artifact!.storageKey }));
  s3.destroy();
  // An upload recorded as answered that the service never stored (so never scanned either).
  const never = await build(balancer, false);
  ledger.uploads.push({ appId: tenant.appId, ...never, answer: 200, cut: false });
  // A 500 answer.
  ledger.answered('createBuild', 500, 3, null, 'internal error');

  const { checks } = await drainAndReckon(stored, balancer, ledger, [tenant], Date.now() + 5_000);
  const lost = byName(checks);
  // 4 acknowledged, 3 counted, 1 id without its claim.
  expect(lost['events counted exactly once']).toBe(2);
  expect(checks.find((c) => c.name === 'events counted exactly once')!.detail).toBe('4 acknowledged, 3 counted by the threats\' count; 1 acknowledged ids without their claim');
  expect(lost['uploads stored with their SHA-256']).toBe(2);
  expect(lost['every uploaded build with one static scan']).toBe(1);
  expect(lost['5xx answers']).toBe(1);
});
