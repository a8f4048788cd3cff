import type { RequestContext } from './context';
import type { AppDoc } from '../data/apps-repo';
import type { BuildDoc } from '../data/builds-repo';
import type { ScanDoc } from '../data/scans-repo';
import type { ThreatDoc } from '../data/threats-repo';
import type { OidcRuleDoc } from '../data/oidc-rules-repo';
import type { ApiKeyDoc } from '../data/api-keys-repo';
import type { AuditDoc } from '../data/audit-repo';
import { DomainError, validationFailed } from '../core/errors';

/**
 * One page of a Relay connection, as services return it: the documents, each one's cursor, and whether more follow.
 * Resolvers turn it into edges, nodes and pageInfo (connectionFields in resolvers/views.ts).
 */
export interface Connection<T> {
  items: T[];
  cursorOf: (item: T) => string;
  hasNextPage: boolean;
  /** True when the page was asked for after a cursor (pages go forward only). */
  hasPreviousPage: boolean;
  /** Counts every item the arguments match (the cursor aside); run only when totalCount is asked for. Null: not counted. */
  totalCount: () => Promise<number | null>;
}

export type AppConnectionPage = Connection<AppDoc>;
export type BuildConnectionPage = Connection<BuildDoc>;
export type ScanConnectionPage = Connection<ScanDoc>;
export type ThreatConnectionPage = Connection<ThreatDoc>;
export type OidcRuleConnectionPage = Connection<OidcRuleDoc>;
export type ApiKeyConnectionPage = Connection<ApiKeyDoc>;
export type AuditEventConnectionPage = Connection<AuditDoc>;

export interface PageArgs {
  first?: number | null;
  after?: string | null;
}

/** Where a keyset page resumes: the sort time (ms since the epoch) and the id of the last item seen. */
export type Position = [number, string];

export interface KeysetPosition {
  at: Date;
  id: string;
}

export const DEFAULT_FIRST = 25;
export const MAX_FIRST = 100;

/** `first` of a connection: 1 to MAX_FIRST (default DEFAULT_FIRST). */
export function pageSize(first: number | null | undefined): number {
  const size = first ?? DEFAULT_FIRST;
  if (!Number.isInteger(size) || size < 1 || size > MAX_FIRST) throw validationFailed([{ pointer: '/first', message: `must be 1 to ${MAX_FIRST}` }]);
  return size;
}

function isPosition(value: unknown): value is Position {
  return Array.isArray(value) && value.length === 2 && Number.isFinite(value[0]) && typeof value[1] === 'string';
}

/**
 * The position an `after` cursor resumes from. The cursor is authenticated and bound to `kind` and `bound` (the
 * app and filter of the query), so a tampered cursor or one made for other arguments is refused (invalid_cursor).
 *
 * `formerKind` names the kind REST page cursors were issued under before REST read the connections: such a cursor
 * holds the same position bound to the same arguments, so it is accepted too, for one release (see FORMER_KINDS).
 */
export function resumeAfter(
  ctx: RequestContext,
  kind: string,
  bound: unknown,
  after: string | null | undefined,
  formerKind?: string,
): KeysetPosition | undefined {
  if (after == null) return undefined;
  const decoded = decodeEither(ctx, [kind, formerKind], bound, after);
  if (!isPosition(decoded)) throw new DomainError('invalid_cursor', 'The cursor is not valid; pass endCursor or an edge cursor exactly as returned.');
  return { at: new Date(decoded[0]), id: decoded[1] };
}

/**
 * Cursor kinds of the page lists REST served before it read the connections (`nextCursor` of GET
 * /v1/apps/{id}/threats and /v1/apps/{id}/audit-events). Their cursors stay good for one release after that change;
 * remove this table, and the `formerKind` arguments, in the release after.
 */
export const FORMER_KINDS = { threats: 'threats', audit: 'audit' } as const;

/** Decodes with the first kind; failing that, with the former one; the refusal is the current kind's. */
function decodeEither(ctx: RequestContext, [kind, formerKind]: [string, string | undefined], bound: unknown, after: string): unknown {
  try {
    return ctx.deps.cursors.decode<unknown>(kind, bound, after, 'endCursor or an edge cursor');
  } catch (error) {
    if (formerKind === undefined) throw error;
    try {
      return ctx.deps.cursors.decode<unknown>(formerKind, bound, after);
    } catch {
      throw error;
    }
  }
}

/** A page read with limit + 1: the extra item only says that more follow. */
export function firstOfMore<T>(docs: T[], size: number): { items: T[]; hasMore: boolean } {
  return { items: docs.slice(0, size), hasMore: docs.length > size };
}

/** A connection over one keyset page; each item's cursor is its position, bound to the query's kind and arguments. */
export function keysetConnection<T extends { _id: string }>(
  ctx: RequestContext,
  page: { kind: string; bound: unknown; after: KeysetPosition | undefined; items: T[]; hasMore: boolean; timeOf: (doc: T) => Date },
  totalCount: () => Promise<number | null>,
): Connection<T> {
  return {
    items: page.items,
    cursorOf: (doc) => ctx.deps.cursors.encode(page.kind, page.bound, [page.timeOf(doc).getTime(), doc._id] satisfies Position),
    hasNextPage: page.hasMore,
    hasPreviousPage: page.after !== undefined,
    totalCount,
  };
}

/** Dates travel inside cursor bindings as ISO text (JSON); absent fields stay absent. */
export function boundDate(value: Date | null | undefined): string | undefined {
  return value ? value.toISOString() : undefined;
}

export const notCounted = async (): Promise<null> => null;
