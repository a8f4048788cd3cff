import DataLoader from 'dataloader';
import type { Repositories } from './repositories';
import type { AppDoc } from './apps-repo';
import type { BuildDoc } from './builds-repo';
import type { ScanDoc } from './scans-repo';

/** A build as its scans are looked up: by app and id (every scan read is scoped to its app). */
export interface BuildKey {
  appId: string;
  buildId: string;
}

/**
 * Per-request batching of the lookups that GraphQL field resolvers repeat for every item of a page: whatever a page of
 * builds or threats asks of each item (its app, its build, its scans, its newest static scan) costs one database
 * round trip per kind of lookup, not one per item. Made for each request and dropped with it, so nothing cached
 * outlives the request nor crosses principals. The loaders do not authorize: field resolvers use them for objects
 * their parent was already allowed to read, and check that a looked-up object belongs to the parent's app.
 */
export interface Loaders {
  apps: DataLoader<string, AppDoc | null>;
  builds: DataLoader<string, BuildDoc | null>;
  /** Scans of a build, oldest first (the order of Build.scans). */
  scansOfBuild: DataLoader<BuildKey, ScanDoc[], string>;
  /** The newest static scan of a build, or null; read through scansOfBuild, so asking for both costs one query. */
  latestStaticScan: DataLoader<BuildKey, ScanDoc | null, string>;
}

const byId = <T extends { _id: string }>(ids: readonly string[], docs: T[]): Array<T | null> => {
  const found = new Map(docs.map((d) => [d._id, d]));
  return ids.map((id) => found.get(id) ?? null);
};

const buildKey = (key: BuildKey) => `${key.appId}\n${key.buildId}`;

/** Oldest first; `engine` breaks ties of equal timestamps ("preview" < "static"), as ScansRepo.listForBuild orders. */
function oldestFirst(a: ScanDoc, b: ScanDoc): number {
  return a.createdAt.getTime() - b.createdAt.getTime() || a.engine.localeCompare(b.engine) || a._id.localeCompare(b._id);
}

export function createLoaders(repos: Repositories): Loaders {
  const scansOfBuild = new DataLoader<BuildKey, ScanDoc[], string>(
    async (keys) => {
      const docs = await repos.scans.listForBuilds(
        keys.map((k) => k.appId),
        keys.map((k) => k.buildId),
      );
      const grouped = new Map<string, ScanDoc[]>();
      for (const doc of docs) {
        const key = buildKey({ appId: doc.appId, buildId: doc.buildId });
        grouped.set(key, [...(grouped.get(key) ?? []), doc]);
      }
      return keys.map((k) => (grouped.get(buildKey(k)) ?? []).sort(oldestFirst));
    },
    { cacheKeyFn: buildKey, maxBatchSize: 100 },
  );
  return {
    apps: new DataLoader(async (ids) => byId(ids, await repos.apps.findByIds(ids)), { maxBatchSize: 100 }),
    builds: new DataLoader(async (ids) => byId(ids, await repos.builds.findByIds(ids)), { maxBatchSize: 100 }),
    scansOfBuild,
    latestStaticScan: new DataLoader<BuildKey, ScanDoc | null, string>(
      async (keys) => {
        const lists = await scansOfBuild.loadMany(keys);
        return lists.map((scans) => {
          if (scans instanceof Error) return scans;
          return scans.filter((s) => s.engine === 'static').at(-1) ?? null;
        });
      },
      { cacheKeyFn: buildKey, maxBatchSize: 100 },
    ),
  };
}
