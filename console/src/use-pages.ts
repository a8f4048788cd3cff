import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api';
import type { QueryState } from './use-query';

/** One page of a connection as the console reads it. */
export interface Page<T> {
  items: T[];
  hasNextPage: boolean;
  endCursor: string | null | undefined;
  totalCount?: number | null;
}

export interface Pages<T> {
  /** Every item of the pages loaded so far, in order. */
  items: T[];
  hasNextPage: boolean;
  totalCount: number | null;
  /** The next page is being read. */
  loadingMore: boolean;
  /** Why the last "load more" failed (the items loaded stay). */
  moreError: ApiError | null;
}

const asApiError = (error: unknown) => (error instanceof ApiError ? error : new ApiError('http', String((error as Error)?.message ?? error)));

/**
 * Cursor paging of a connection: `load(null)` reads the first page whenever `key` changes (or on `reload`), `more()`
 * appends the page after the last cursor. A page that arrives after a newer key or reload is dropped.
 */
export function usePages<T>(key: string, load: (after: string | null) => Promise<Page<T>>): [QueryState<Pages<T>>, () => void, () => void] {
  const [state, setState] = useState<QueryState<Pages<T>>>({ status: 'loading' });
  const [nonce, setNonce] = useState(0);
  const generation = useRef(0);
  const cursor = useRef<string | null>(null);
  useEffect(() => {
    const mine = ++generation.current;
    setState({ status: 'loading' });
    load(null).then(
      (page) => {
        if (mine !== generation.current) return;
        cursor.current = page.endCursor ?? null;
        setState({ status: 'done', data: { items: page.items, hasNextPage: page.hasNextPage, totalCount: page.totalCount ?? null, loadingMore: false, moreError: null } });
      },
      (error: unknown) => mine === generation.current && setState({ status: 'error', error: asApiError(error) }),
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key, nonce]);
  const reload = useCallback(() => setNonce((x) => x + 1), []);
  const more = useCallback(() => {
    const mine = generation.current;
    const after = cursor.current;
    setState((s) => (s.status === 'done' ? { status: 'done', data: { ...s.data, loadingMore: true, moreError: null } } : s));
    load(after).then(
      (page) => {
        if (mine !== generation.current) return;
        cursor.current = page.endCursor ?? null;
        setState((s) =>
          s.status === 'done'
            ? { status: 'done', data: { items: [...s.data.items, ...page.items], hasNextPage: page.hasNextPage, totalCount: page.totalCount ?? s.data.totalCount, loadingMore: false, moreError: null } }
            : s,
        );
      },
      (error: unknown) => {
        if (mine !== generation.current) return;
        setState((s) => (s.status === 'done' ? { status: 'done', data: { ...s.data, loadingMore: false, moreError: asApiError(error) } } : s));
      },
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key, nonce]);
  return [state, reload, more];
}
