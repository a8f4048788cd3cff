/**
 * The staff token, in this module's memory only: never in storage, a cookie, the URL or GraphiQL's header editor
 * (whose contents GraphiQL may keep). It goes to this origin's /graphql and nowhere else.
 */
let token: string | null = null;

export const TOKEN_SHAPE = /^stf_[A-Za-z0-9]+_[A-Za-z0-9_-]+$/;

export function setToken(value: string | null): void {
  token = value;
}

/** Told when the service stops accepting the token (expired, revoked): the page returns to sign-in. */
let onRefused: (() => void) | null = null;
export function whenRefused(fn: (() => void) | null): void {
  onRefused = fn;
}

export interface GraphqlAnswer {
  data?: unknown;
  errors?: Array<{ message: string; extensions?: { code?: string } }>;
}

/** One operation to /graphql with the token; the answer as the service gave it (GraphiQL shows errors itself). */
export async function post(body: unknown): Promise<{ status: number; answer: GraphqlAnswer }> {
  if (!token) throw new Error('Not signed in.');
  const res = await fetch('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
    credentials: 'omit',
    cache: 'no-store',
    referrerPolicy: 'no-referrer',
  });
  const answer = (await res.json().catch(() => ({ errors: [{ message: `The service answered ${res.status} with no JSON.` }] }))) as GraphqlAnswer;
  if (res.status === 401 && onRefused) onRefused();
  return { status: res.status, answer };
}
