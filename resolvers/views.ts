import type { RequestContext } from '../src/services/context';
import type { AppDoc } from '../src/data/apps-repo';
import type { BuildDoc } from '../src/data/builds-repo';
import type { Connection } from '../src/services/pages';

/**
 * Resolvers of a GraphQL type whose resolvers return a stored document (the mappers in scripts/codegen.ts): every
 * field the document does not hold under the field's own name must have a resolver, so forgetting one (or a
 * document losing a field) fails to compile. Stored-only fields (hashes, device ids, slots) have no GraphQL field,
 * so they stay inside.
 */
export type MappedResolvers<R, Doc> = R & Required<Pick<R, Exclude<keyof R, keyof Doc | '__isTypeOf' | '__resolveType'>>>;

/** edges, nodes, pageInfo and totalCount of any connection, from the page a service returned. */
export function connectionFields<T>() {
  return {
    edges: (page: Connection<T>) => page.items.map((node) => ({ cursor: page.cursorOf(node), node })),
    nodes: (page: Connection<T>) => page.items,
    pageInfo: (page: Connection<T>) => {
      const first = page.items[0];
      const last = page.items[page.items.length - 1];
      return {
        hasNextPage: page.hasNextPage,
        hasPreviousPage: page.hasPreviousPage,
        startCursor: first === undefined ? null : page.cursorOf(first),
        endCursor: last === undefined ? null : page.cursorOf(last),
      };
    },
    totalCount: (page: Connection<T>) => page.totalCount(),
  };
}

/** DateTime arguments arrive as Dates (resolvers/scalars.ts); typed as Date | string by codegen. */
export const asDate = (value: Date | string) => (value instanceof Date ? value : new Date(value));
export const asOptionalDate = (value: Date | string | null | undefined) => (value == null ? null : asDate(value));

/**
 * The build an object of `appId` names, through the request's loader; null when it is unknown or of another app (a
 * device reports any buildId it likes, so a threat must never lead to another tenant's build).
 */
export async function buildOfApp(ctx: RequestContext, appId: string, buildId: string | null): Promise<BuildDoc | null> {
  if (!buildId) return null;
  const build = await ctx.loaders.builds.load(buildId);
  return build && build.appId === appId ? build : null;
}

/** The app of an object the caller was allowed to read; every stored object names an existing app. */
export async function appOf(ctx: RequestContext, appId: string): Promise<AppDoc> {
  const app = await ctx.loaders.apps.load(appId);
  if (!app) throw new Error(`app ${appId} is missing`);
  return app;
}
