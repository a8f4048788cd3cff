// Protects: rate limits of docs/contract.md: headers on every metered response (errors too), 429 with Retry-After and a
// rate_limited problem, one bucket per key and one per client address for bad credentials, counters shared by
// instances through Redis, and service continuity when Redis goes away and comes back.
import { startHarness, bearer, testBedEnv, type Harness, readJson } from '../support/harness';
import Redis from 'ioredis';
import { startRedis } from '../bed/servers';

async function redisKeys(url: string): Promise<string[]> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await client.connect();
    return await client.keys('*');
  } finally {
    client.disconnect();
  }
}

describe('limits per plan, on the shared Redis of the test bed', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ env: { REDIS_URL: testBedEnv().REDIS_URL } });
  });
  afterAll(async () => h.close());

  it('counts down and refuses the 61st request of a hatchling key in one window', async () => {
    const { appId } = await h.newApp('hatchling');
    const { key } = await h.newKey(appId, ['builds:read']);
    let last: Response | null = null;
    for (let i = 1; i <= 60; i++) {
      last = await h.api('/v1/whoami', { headers: bearer(key) });
      expect(last.status).toBe(200);
      expect(last.headers.get('ratelimit-limit')).toBe('60');
      expect(last.headers.get('ratelimit-remaining')).toBe(String(60 - i));
      const reset = Number(last.headers.get('ratelimit-reset'));
      expect(reset).toBeGreaterThanOrEqual(0);
      expect(reset).toBeLessThanOrEqual(60);
    }
    const refused = await h.api('/v1/whoami', { headers: bearer(key) });
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    const body = await readJson(refused);
    expect(body).toMatchObject({ status: 429, code: 'rate_limited', retryAfter });

    // Another key of the same app has its own bucket.
    const other = await h.newKey(appId, ['builds:read']);
    expect((await h.api('/v1/whoami', { headers: bearer(other.key) })).status).toBe(200);
  });

  it('puts the headers on error responses too', async () => {
    const { appId } = await h.newApp('indie');
    const { key } = await h.newKey(appId, ['builds:read']);
    const res = await h.api('/v1/builds/bld_doesnotexist', { headers: bearer(key) });
    expect(res.status).toBe(404);
    expect(res.headers.get('ratelimit-limit')).toBe('300');
    expect(res.headers.get('ratelimit-remaining')).toBe('299');
  });

  it('counts requests with bad credentials against the client address', async () => {
    // A client address of its own, so requests of other test files sharing this Redis do not count here.
    const client = { 'x-forwarded-for': `198.51.100.${Math.floor(Math.random() * 250) + 1}` };
    const first = await h.api('/v1/whoami', { headers: { ...client, authorization: 'Bearer wrong' } });
    expect(first.status).toBe(401);
    expect(first.headers.get('ratelimit-limit')).toBe('120');
    const before = Number(first.headers.get('ratelimit-remaining'));
    const second = await h.api('/v1/whoami', { headers: client });
    expect(Number(second.headers.get('ratelimit-remaining'))).toBe(before - 1);
  });

  it('counts an IPv6 client per /64: a new address in the same /64 does not get a fresh bucket', async () => {
    const prefix = `2001:db8:${Math.floor(Math.random() * 0xffff).toString(16)}:1`;
    const at = async (host: string) => {
      const res = await h.api('/v1/whoami', { headers: { 'x-forwarded-for': `${prefix}:${host}` } });
      return Number(res.headers.get('ratelimit-remaining'));
    };
    const first = await at('0:0:0:1');
    expect(await at('dead:beef:0:2')).toBe(first - 1);
    expect(await at('ffff:ffff:ffff:ffff')).toBe(first - 2);
    const elsewhere = await h.api('/v1/whoami', { headers: { 'x-forwarded-for': `2001:db8:ffff:2::1` } });
    expect(Number(elsewhere.headers.get('ratelimit-remaining'))).toBeGreaterThan(first - 2);
  });

  it('shares the counters between two instances through Redis', async () => {
    const second = await startHarness({ env: { MONGODB_DATABASE: h.config.mongodbDatabase, REDIS_URL: testBedEnv().REDIS_URL } });
    try {
      const { appId } = await h.newApp('hatchling');
      const { key } = await h.newKey(appId, ['builds:read']);
      await h.api('/v1/whoami', { headers: bearer(key) });
      const res = await second.api('/v1/whoami', { headers: bearer(key) });
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-remaining')).toBe('58');
    } finally {
      await second.close();
    }
  });
});

describe('when Redis goes away', () => {
  it('keeps answering on the in-process limiter and uses Redis again when it is back', async () => {
    const redis = await startRedis();
    const h = await startHarness({ env: { REDIS_URL: redis.url } });
    try {
      const { appId } = await h.newApp('startup');
      const { key } = await h.newKey(appId, ['builds:read']);
      const ok = await h.api('/v1/whoami', { headers: bearer(key) });
      expect(ok.status).toBe(200);
      expect(await redisKeys(redis.url)).not.toHaveLength(0);

      await redis.stop();
      for (let i = 0; i < 5; i++) {
        const res = await h.api('/v1/whoami', { headers: bearer(key) });
        expect(res.status).toBe(200);
        expect(res.headers.get('ratelimit-limit')).toBe('1200');
      }
      const ready = await h.api('/readyz');
      expect(ready.status).toBe(503);
      expect((await readJson(ready)).checks.redis).toBe('down');

      await redis.restart();
      // Wait for the client to reconnect (ioredis retries on its own), then requests count in Redis again.
      const until = Date.now() + 15_000;
      while (Date.now() < until && h.deps.redis?.status !== 'ready') await new Promise((r) => setTimeout(r, 100));
      expect(h.deps.redis?.status).toBe('ready');
      const after = await h.api('/v1/whoami', { headers: bearer(key) });
      expect(after.status).toBe(200);
      expect((await redisKeys(redis.url)).some((k) => k.includes('key:'))).toBe(true);
      expect((await h.api('/readyz')).status).toBe(200);
    } finally {
      await h.close();
      await redis.stop();
    }
  });
});
