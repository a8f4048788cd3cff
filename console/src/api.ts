import type { Operation } from './operations';

/** What went wrong with a request, in the words the console shows (with the request id support quotes). */
export class ApiError extends Error {
  constructor(
    /** auth: the token is no longer accepted (expired, revoked, unknown): the console returns to sign-in. */
    readonly kind: 'auth' | 'forbidden' | 'graphql' | 'network' | 'http' | 'rate_limited',
    message: string,
    readonly requestId: string | null = null,
    readonly code: string | null = null,
  ) {
    super(message);
  }
}

interface GraphqlError {
  message: string;
  extensions?: { code?: string; retryAfter?: number };
}

/** The staff token, in this module's memory only: never in storage, a cookie or the URL. Gone with the tab. */
let token: string | null = null;

export function setToken(value: string | null): void {
  token = value;
}

export function hasToken(): boolean {
  return token !== null;
}

/** Listeners told when the token stops working (the app then signs out with the message). */
const onAuthLost = new Set<(error: ApiError) => void>();
export function whenAuthLost(fn: (error: ApiError) => void): () => void {
  onAuthLost.add(fn);
  return () => onAuthLost.delete(fn);
}

/**
 * One GraphQL operation in the persisted-query form: operation name, variables and the document's SHA-256. A
 * registered document goes by its hash alone; the text follows only if the server answers that it does not know
 * the hash (Apollo's automatic persisted queries protocol), and always for a document the manifest lacks.
 */
export async function run<T, V>(op: Operation<T, V>, variables: V): Promise<T> {
  if (op.registered) {
    try {
      return await send(op, variables, false);
    } catch (error) {
      if (!(error instanceof ApiError && error.code === 'PERSISTED_QUERY_NOT_FOUND')) throw error;
    }
  }
  return send(op, variables, true);
}

async function send<T, V>(op: Operation<T, V>, variables: V, withText: boolean): Promise<T> {
  if (!token) throw new ApiError('auth', 'Not signed in.');
  const body = {
    operationName: op.operationName,
    variables,
    extensions: { persistedQuery: { version: 1, sha256Hash: op.sha256Hash } },
    ...(withText ? { query: op.query } : {}),
  };
  let res: Response;
  try {
    res = await fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, accept: 'application/json' },
      body: JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch {
    throw new ApiError('network', 'The service could not be reached. Check the connection and try again.');
  }
  const requestId = res.headers.get('x-request-id');
  type Payload = { data?: T | null; errors?: GraphqlError[] };
  let payload: Payload | null = null;
  try {
    payload = (await res.json()) as Payload;
  } catch {
    payload = null;
  }
  const first = payload?.errors?.[0];
  const code = first?.extensions?.code ?? null;
  if (res.status === 401 || code === 'unauthorized' || code === 'UNAUTHENTICATED') {
    const error = new ApiError('auth', 'Your staff token has expired or was revoked. Sign in with a new one (shieldgate staff create).', requestId, code);
    for (const fn of onAuthLost) fn(error);
    throw error;
  }
  if (res.status === 429 || code === 'rate_limited') {
    const wait = first?.extensions?.retryAfter;
    throw new ApiError('rate_limited', `Too many requests for this token${wait ? `; try again in ${wait} s` : ''}.`, requestId, code);
  }
  if (code === 'insufficient_scope' || code === 'forbidden') throw new ApiError('forbidden', first?.message ?? 'Not allowed.', requestId, code);
  if (first) throw new ApiError('graphql', first.message, requestId, code);
  if (!res.ok || !payload?.data) throw new ApiError('http', `The service answered ${res.status} ${res.statusText}.`.replace(/ \.$/, '.'), requestId);
  return payload.data;
}
