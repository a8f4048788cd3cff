/**
 * The credential of a run: SHIELDGATE_API_KEY when set; otherwise, inside GitHub Actions, the job's OIDC token
 * (audience: the server's address) exchanged for a 10-minute access token, renewed by a new exchange before it
 * expires. Tokens are never printed; the access token is masked in the job log.
 */
import type { ApiClient, CredentialSource } from './api';
import { decodeRuleClaims, refusalReport } from './claims';
import { CliError, EXIT, ServiceError, problemLine } from './errors';
import { annotate, canRequestIdToken, mask, requestIdToken, type Env } from './github';
import { backoffMs, isRetryableStatus, sleep } from './retry';

/** Renew this long before the access token's expiry, so a request never leaves with a token about to lapse. */
const RENEW_MARGIN_MS = 60_000;

export class ExchangeRefused extends CliError {
  constructor(readonly report: string[]) {
    super(report[0], EXIT.refused);
    this.name = 'ExchangeRefused';
  }
}

export function apiKeyCredential(key: string): CredentialSource {
  return { kind: 'api_key', authorization: async () => `Bearer ${key}`, renew: async () => false };
}

interface Held {
  token: string;
  renewAt: number;
}

async function exchangeOnce(api: ApiClient, env: Env, serverUrl: string, appId: string, log: (line: string) => void, now: () => number): Promise<Held> {
  const idToken = await requestIdToken(env, serverUrl);
  for (let attempt = 1; ; attempt++) {
    let answer;
    try {
      answer = await api.POST('/v1/auth/oidc', { body: { token: idToken, appId } });
    } catch (error) {
      if (attempt >= 4) throw new ServiceError(0, 'network', `token exchange: ${(error as Error).message}`);
      await sleep(backoffMs(attempt));
      continue;
    }
    const { data, error, response } = answer;
    if (data) {
      mask(env, data.accessToken);
      // A token shorter-lived than twice the margin is renewed halfway through its life instead.
      return { token: data.accessToken, renewAt: now() + data.expiresIn * 1000 - Math.min(RENEW_MARGIN_MS, (data.expiresIn * 1000) / 2) };
    }
    if (response.status === 401) {
      const report = refusalReport(appId, serverUrl, decodeRuleClaims(idToken));
      report.forEach(log);
      annotate(env, 'error', 'shieldgate: OIDC exchange refused', `${report[0]} The job's claims and a rule that would admit it are in the step log.`);
      throw new ExchangeRefused(report);
    }
    // A token whose exchange failed for a transient reason may still be unused; GitHub gives a fresh one anyway.
    if (isRetryableStatus(response.status) && attempt < 4) {
      await sleep(backoffMs(attempt));
      continue;
    }
    const problem = problemLine(error, response.statusText);
    throw new ServiceError(response.status, problem.code, `token exchange: ${problem.detail}`);
  }
}

/**
 * The job's OIDC token exchanged for an access token of `appId`. A wait that outlives the access token (a long scan,
 * upload retries) gets a new one by a new exchange, with a fresh OIDC token from GitHub: before a request once the
 * token is within a minute of its expiry on `now`, and whenever the service answers 401 to it (its clock decides).
 */
export async function githubOidcCredential(
  api: ApiClient,
  env: Env,
  serverUrl: string,
  appId: string,
  log: (line: string) => void,
  now: () => number = Date.now,
): Promise<CredentialSource> {
  let held = await exchangeOnce(api, env, serverUrl, appId, log, now);
  return {
    kind: 'oidc',
    authorization: async () => {
      if (now() >= held.renewAt) held = await exchangeOnce(api, env, serverUrl, appId, log, now);
      return `Bearer ${held.token}`;
    },
    renew: async () => {
      held = await exchangeOnce(api, env, serverUrl, appId, log, now);
      return true;
    },
  };
}

/** Picks the credential from the environment; `appId` is needed only for the keyless exchange. */
export async function resolveCredential(api: ApiClient, env: Env, serverUrl: string, appId: string | undefined, log: (line: string) => void): Promise<CredentialSource> {
  if (env.SHIELDGATE_API_KEY) {
    mask(env, env.SHIELDGATE_API_KEY);
    return apiKeyCredential(env.SHIELDGATE_API_KEY);
  }
  if (canRequestIdToken(env)) {
    if (!appId) throw new CliError('--app is required for the keyless exchange (or set SHIELDGATE_API_KEY)');
    return githubOidcCredential(api, env, serverUrl, appId, log);
  }
  throw new CliError('no credential: set SHIELDGATE_API_KEY, or run in GitHub Actions with "permissions: id-token: write"');
}
