import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError } from './api';

export type QueryState<T> = { status: 'loading' } | { status: 'error'; error: ApiError } | { status: 'done'; data: T };

/** Runs `load` whenever `key` changes; `reload` runs it again. A result that arrives after a newer key is dropped. */
export function useQuery<T>(key: string, load: () => Promise<T>): [QueryState<T>, () => void] {
  const [state, setState] = useState<QueryState<T>>({ status: 'loading' });
  const [nonce, setNonce] = useState(0);
  useEffect(() => {
    let current = true;
    setState({ status: 'loading' });
    load().then(
      (data) => current && setState({ status: 'done', data }),
      (error: unknown) => current && setState({ status: 'error', error: error instanceof ApiError ? error : new ApiError('http', String((error as Error)?.message ?? error)) }),
    );
    return () => {
      current = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key, nonce]);
  const reload = useCallback(() => setNonce((x) => x + 1), []);
  return [state, reload];
}
