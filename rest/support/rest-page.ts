/**
 * The one way a REST list is made from a GraphQL connection: `{ data, hasMore, nextCursor }` as the contract shapes
 * it (openapi/v1.yaml, "List operations"). nextCursor is the connection's endCursor, and null on the last page;
 * passed back as `cursor`, it becomes the connection's `after`.
 */
export interface ConnectionPage<N> {
  nodes: readonly N[];
  pageInfo: { hasNextPage: boolean; endCursor?: string | null };
}

export interface RestPage<T> {
  data: T[];
  hasMore: boolean;
  nextCursor: string | null;
}

export function toRestPage<N, T>(connection: ConnectionPage<N>, toRest: (node: N) => T): RestPage<T> {
  const { hasNextPage, endCursor } = connection.pageInfo;
  return { data: connection.nodes.map(toRest), hasMore: hasNextPage, nextCursor: hasNextPage ? (endCursor ?? null) : null };
}

/** The REST page arguments as the connection's: `limit` (default 25, as the contract says) and `cursor`. */
export function connectionArgs(query: { limit?: number; cursor?: string }): { first: number; after: string | null } {
  return { first: query.limit ?? 25, after: query.cursor ?? null };
}
