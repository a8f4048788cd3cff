// Protects: the app cache API-key authentication reads through (Deps.instance.apps) serves an app from memory for
// APP_CACHE_MS and no longer, never remembers an app that does not exist, and holds at most its bound, forgetting the
// least recently loaded app first. That two instances never share it is in test/integration/auth.test.ts.
import { AppCache, APP_CACHE_MS } from '../../src/auth/app-cache';
import type { AppDoc } from '../../src/data/apps-repo';

/** A loader that counts its calls per app, as the apps repository would be read. */
function counter(known: Set<string>) {
  const reads = new Map<string, number>();
  const load = async (appId: string): Promise<AppDoc | null> => {
    reads.set(appId, (reads.get(appId) ?? 0) + 1);
    return known.has(appId) ? { _id: appId, name: appId, plan: 'indie', org: 'org', createdAt: new Date(0) } : null;
  };
  return { load, reads: (appId: string) => reads.get(appId) ?? 0 };
}

beforeEach(() => jest.useFakeTimers({ now: new Date('2030-01-01T00:00:00Z') }));
afterEach(() => jest.useRealTimers());

it('reads an app once while fresh, and again once APP_CACHE_MS has passed', async () => {
  const cache = new AppCache();
  const { load, reads } = counter(new Set(['app_a']));
  expect((await cache.of('app_a', load))?._id).toBe('app_a');
  jest.advanceTimersByTime(APP_CACHE_MS - 1);
  await cache.of('app_a', load);
  expect(reads('app_a')).toBe(1);
  jest.advanceTimersByTime(1);
  await cache.of('app_a', load);
  expect(reads('app_a')).toBe(2);
});

it('does not remember an app that does not exist', async () => {
  const cache = new AppCache();
  const { load, reads } = counter(new Set());
  expect(await cache.of('app_gone', load)).toBeNull();
  expect(await cache.of('app_gone', load)).toBeNull();
  expect(reads('app_gone')).toBe(2);
  expect(cache.size).toBe(0);
});

it('holds at most its bound, forgetting the least recently loaded app first', async () => {
  const cache = new AppCache(3);
  const ids = ['app_1', 'app_2', 'app_3', 'app_4'];
  const { load, reads } = counter(new Set(ids));
  for (const id of ids) await cache.of(id, load);
  expect(cache.size).toBe(3);
  for (const id of ['app_2', 'app_3', 'app_4']) await cache.of(id, load);
  expect(ids.map(reads)).toEqual([1, 1, 1, 1]);
  await cache.of('app_1', load); // evicted: read again, which evicts app_2 (now the least recently loaded)
  await cache.of('app_4', load);
  expect(ids.map(reads)).toEqual([2, 1, 1, 1]);
  await cache.of('app_2', load);
  expect(ids.map(reads)).toEqual([2, 2, 1, 1]);
  expect(cache.size).toBe(3);
});

it('two caches never share an entry', async () => {
  const { load, reads } = counter(new Set(['app_a']));
  await new AppCache().of('app_a', load);
  await new AppCache().of('app_a', load);
  expect(reads('app_a')).toBe(2);
});
