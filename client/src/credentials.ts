/**
 * The credential of a run: SHIELDGATE_API_KEY when set; otherwise, in a CI the job is detected in (providers/), the
 * job's OIDC token (audience: the server's address) exchanged for a 10-minute access token, renewed by a new
 * exchange before it expires where the CI gives a fresh token per request. Tokens are never printed; in GitHub
 * Actions the access token is masked in the job log (no workflow command is written anywhere else).
 */
import type { ApiClient, CredentialSource } from './api';
import { decodeRuleClaims, refusalReport } from './claims';
import { CliError, EXIT, ServiceError, problemLine } from './errors';
import { annotate, mask, type Env } from './github';
import { detectProvider, defaultTokenOptions, github, PROVIDERS, type CiProvider, type TokenOptions } from './providers/detect';
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
  expiresAt: number;
}

interface Exchange {
  api: ApiClient;
  env: Env;
  serverUrl: string;
  appId: string;
  log: (line: string) => void;
  now: () => number;
  provider: CiProvider;
}

async function exchangeOnce({ api, env, serverUrl, appId, log, now, provider }: Exchange, idToken: string): Promise<Held> {
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
      const expiresAt = now() + data.expiresIn * 1000;
      return { token: data.accessToken, renewAt: expiresAt - Math.min(RENEW_MARGIN_MS, (data.expiresIn * 1000) / 2), expiresAt };
    }
    if (response.status === 401) {
      const job = { provider: provider.name, ref: provider.ref(env), runUrl: provider.runUrl(env), oneTokenPerJob: provider.oneTokenPerJob, resent: attempt > 1 };
      const report = refusalReport(appId, serverUrl, decodeRuleClaims(idToken), provider === github ? undefined : job);
      report.forEach(log);
      annotate(env, 'error', 'shieldgate: OIDC exchange refused', `${report[0]} The job's claims and a rule that would admit it are in the step log.`);
      throw new ExchangeRefused(report);
    }
    // A token whose exchange failed for a transient reason is most likely unused, so it is sent again (a CI with one
    // token per job has no other); should the service have marked it used, the retry is refused and the report says
    // the token may have been spent by the earlier attempt.
    if (isRetryableStatus(response.status) && attempt < 4) {
      await sleep(backoffMs(attempt));
      continue;
    }
    const problem = problemLine(error, response.statusText);
    throw new ServiceError(response.status, problem.code, `token exchange: ${problem.detail}`);
  }
}

/** The renewal of a job whose CI gives one token per job, which the service has accepted once already. */
function oneTokenSpent(provider: CiProvider): CliError {
  return new CliError(
    `the access token expired and cannot be renewed: ${provider.name} gives a job one OIDC token and the service accepts it once (wait for the scan in a later job: shieldgate-ci scan BUILD_ID --wait; or set SHIELDGATE_API_KEY)`,
  );
}

/**
 * The job's OIDC token exchanged for an access token of `appId`. A wait that outlives the access token (a long scan,
 * upload retries) gets a new one by a new exchange, with a fresh OIDC token from the CI: before a request once the
 * token is within a minute of its expiry on `now`, and whenever the service answers 401 to it (its clock decides).
 * Where the CI gives one token per job (GitLab, Bitbucket), that token has been exchanged and is never sent again
 * (the service would refuse it as replayed): the access token is used up to its expiry, then the command fails
 * with one line saying so.
 */
export async function ciOidcCredential(
  api: ApiClient,
  env: Env,
  serverUrl: string,
  appId: string,
  log: (line: string) => void,
  provider: CiProvider,
  options: TokenOptions = defaultTokenOptions(),
  now: () => number = Date.now,
): Promise<CredentialSource> {
  const exchange: Exchange = { api, env, serverUrl, appId, log, now, provider };
  const fresh = async () => exchangeOnce(exchange, await provider.idToken(env, serverUrl, options));
  let held = await fresh();
  return {
    kind: 'oidc',
    authorization: async () => {
      if (now() >= held.renewAt) {
        if (!provider.oneTokenPerJob) held = await fresh();
        // The minute of margin is a comfort, not a need: with no second token the access token serves to its end.
        else if (now() >= held.expiresAt) throw oneTokenSpent(provider);
      }
      return `Bearer ${held.token}`;
    },
    renew: async () => {
      if (provider.oneTokenPerJob) throw oneTokenSpent(provider);
      held = await fresh();
      return true;
    },
  };
}

/** The GitHub Actions exchange (ciOidcCredential with GitHub's token endpoint). */
export function githubOidcCredential(
  api: ApiClient,
  env: Env,
  serverUrl: string,
  appId: string,
  log: (line: string) => void,
  now: () => number = Date.now,
): Promise<CredentialSource> {
  return ciOidcCredential(api, env, serverUrl, appId, log, github, defaultTokenOptions(), now);
}

/** Picks the credential from the environment; `appId` is needed only for the keyless exchange. */
export async function resolveCredential(
  api: ApiClient,
  env: Env,
  serverUrl: string,
  appId: string | undefined,
  log: (line: string) => void,
  options: TokenOptions = defaultTokenOptions(),
): Promise<CredentialSource> {
  if (env.SHIELDGATE_API_KEY) {
    mask(env, env.SHIELDGATE_API_KEY);
    return apiKeyCredential(env.SHIELDGATE_API_KEY);
  }
  const provider = detectProvider(env);
  if (provider) {
    if (!appId) throw new CliError('--app is required for the keyless exchange (or set SHIELDGATE_API_KEY)');
    return ciOidcCredential(api, env, serverUrl, appId, log, provider, options);
  }
  throw new CliError(`no credential: set SHIELDGATE_API_KEY, or run in a CI whose OIDC token shieldgate-ci gets (${PROVIDERS.map((p) => p.name).join(', ')})`);
}
