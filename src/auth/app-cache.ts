import type { AppDoc } from '../data/apps-repo';

/** How long an app's plan may be served from memory. Plans change rarely and are not a security boundary. */
export const APP_CACHE_MS = 30_000;
/**
 * Apps remembered at most: an entry is one app record (well under a kilobyte), and an instance serving more apps than
 * this within APP_CACHE_MS rereads the least recently loaded ones instead of growing without bound.
 */
export const MAX_CACHED_APPS = 10_000;

/**
 * The apps that API keys authenticated on this instance belong to, remembered for APP_CACHE_MS so a request costs one
 * read (its key) instead of two (Deps.instance.apps). Per instance: another instance, or a test harness in the same
 * process, reads its own copy.
 */
export class AppCache {
  private readonly apps = new Map<string, { app: AppDoc; until: number }>();

  constructor(private readonly maxApps = MAX_CACHED_APPS) {}

  /** The app from memory while fresh, else from `load` (remembered only when it exists). */
  async of(appId: string, load: (appId: string) => Promise<AppDoc | null>): Promise<AppDoc | null> {
    // Real time, not the service clock: this only paces reads, nothing expires by it.
    const now = Date.now();
    const cached = this.apps.get(appId);
    if (cached && cached.until > now) return cached.app;
    const app = await load(appId);
    this.apps.delete(appId); // re-insert: the Map's order is the eviction order
    if (app) {
      this.apps.set(appId, { app, until: now + APP_CACHE_MS });
      if (this.apps.size > this.maxApps) this.apps.delete(this.apps.keys().next().value as string);
    }
    return app;
  }

  /** Apps remembered now (expired ones included until reloaded or evicted). */
  get size(): number {
    return this.apps.size;
  }
}
