/**
 * One shape for every CI the client runs in: how to tell it from its environment, how to get the job's OIDC token
 * for an audience, where it says the commit, the ref and the link to the run, and the line that tells a job that
 * was not set up for OIDC what to add. Each provider's knowledge stays in its own small file beside this one.
 */
import type { Env } from '../github';

export type { Env };

/** GitLab's `id_tokens:` variable the token is read from; `--id-token-var` names another. */
export const DEFAULT_ID_TOKEN_VAR = 'SHIELDGATE_ID_TOKEN';

export interface TokenOptions {
  /** The variable GitLab's `id_tokens:` puts the job's token in (`--id-token-var`). */
  idTokenVar: string;
  /** How long a token command may take (tests shorten it). */
  commandTimeoutMs?: number;
}

export const defaultTokenOptions = (): TokenOptions => ({ idTokenVar: DEFAULT_ID_TOKEN_VAR });

export interface CiProvider {
  /** As the CI calls itself, for log lines: "GitLab CI". */
  readonly name: string;
  /**
   * The job holds one token, in a variable, for its whole life (GitLab, Bitbucket): the service accepts each token
   * once, so it is exchanged once and never sent again. Providers that mint a token on request get a fresh one for
   * every exchange.
   */
  readonly oneTokenPerJob: boolean;
  /** The variable commit(env) reads, named when the commit is reported. */
  readonly commitVariable: string;
  detect(env: Env): boolean;
  /** The job's OIDC token for `audience`; a CliError of one line when the job cannot have one. */
  idToken(env: Env, audience: string, options: TokenOptions): Promise<string>;
  commit(env: Env): string | undefined;
  /** A full ref, `refs/heads/<branch>` or `refs/tags/<tag>`, as GitHub's GITHUB_REF and the service's provenance. */
  ref(env: Env): string | undefined;
  /** The link to the job or pipeline run, when the CI says it. */
  runUrl(env: Env): string | undefined;
  /** The one line for a job without OIDC set up: the snippet to add, and where the docs say more. */
  missingSetupHint(audience: string, options: TokenOptions): string;
}
