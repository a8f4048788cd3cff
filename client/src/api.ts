/**
 * The typed REST client: openapi-fetch over the types generated from openapi/v1.yaml, with the credential added to
 * every request and transient failures (network errors, 429 and 5xx) retried with back-off.
 */
import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './generated/openapi';
import { ServiceError, problemLine } from './errors';
import { backoffMs, isRetryableStatus, retryAfterMs, sleep } from './retry';

export type Build = components['schemas']['Build'];
export type Scan = components['schemas']['Scan'];
export type Finding = components['schemas']['Finding'];
export type Whoami = components['schemas']['Whoami'];
export type BuildCreate = components['schemas']['BuildCreate'];
export type ApiClient = Client<paths>;

/** Gives the Authorization header; `renew` is called once when the service answers 401 to it. */
export interface CredentialSource {
  readonly kind: 'api_key' | 'oidc';
  authorization(): Promise<string>;
  renew(): Promise<boolean>;
}

export function createApiClient(baseUrl: string, userAgent = 'shieldgate-ci'): ApiClient {
  return createClient<paths>({ baseUrl: baseUrl.replace(/\/+$/, ''), headers: { 'user-agent': userAgent } });
}

interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

const MAX_ATTEMPTS = 5;

/**
 * Runs one operation with the credential: retried on network errors, 429 and 5xx (honouring Retry-After), renewed
 * once on 401. Any other failure becomes a ServiceError with the problem's one line.
 */
export async function call<T>(
  what: string,
  credential: CredentialSource | null,
  operation: (headers: Record<string, string>) => Promise<Answer<T>>,
  opts: { okStatuses?: number[] } = {},
): Promise<{ data: T; response: Response }> {
  let renewed = false;
  for (let attempt = 1; ; attempt++) {
    const headers: Record<string, string> = credential ? { authorization: await credential.authorization() } : {};
    let answer: Answer<T>;
    try {
      answer = await operation(headers);
    } catch (error) {
      if (attempt >= MAX_ATTEMPTS) throw new ServiceError(0, 'network', `${what}: ${(error as Error).message}`);
      await sleep(backoffMs(attempt));
      continue;
    }
    const { response } = answer;
    if (response.ok || opts.okStatuses?.includes(response.status)) return { data: answer.data as T, response };
    if (response.status === 401 && credential && !renewed) {
      renewed = true;
      if (await credential.renew()) continue;
    }
    if (isRetryableStatus(response.status) && attempt < MAX_ATTEMPTS) {
      await sleep(retryAfterMs(response.headers.get('retry-after')) ?? backoffMs(attempt));
      continue;
    }
    const problem = problemLine(answer.error, response.statusText || 'request failed');
    throw new ServiceError(response.status, problem.code, `${what}: ${problem.detail}`);
  }
}
