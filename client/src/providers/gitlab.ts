/**
 * GitLab CI: the job's token is the variable its `id_tokens:` names, minted once when the job starts with the `aud`
 * the job asked for (GitLab has no default audience, and no way to ask for another token later). The variable is
 * SHIELDGATE_ID_TOKEN unless `--id-token-var` names another.
 */
import { CliError } from '../errors';
import { checkVariableToken, fullRef, httpUrl } from './shared';
import type { CiProvider, TokenOptions } from './types';

const setup = (audience: string, options: TokenOptions) => `add "id_tokens: ${options.idTokenVar}: aud: ${audience}" to the job (docs/keyless-ci.md, GitLab)`;

export const gitlab: CiProvider = {
  name: 'GitLab CI',
  oneTokenPerJob: true,
  commitVariable: 'CI_COMMIT_SHA',
  detect: (env) => env.GITLAB_CI === 'true',
  idToken: async (env, audience, options) => {
    const token = env[options.idTokenVar]?.trim();
    if (!token) throw new CliError(gitlab.missingSetupHint(audience, options));
    // The service takes one audience per GitLab token, exactly: an `aud:` list is refused there, so here first.
    return checkVariableToken(token, options.idTokenVar, audience, false, setup(audience, options));
  },
  commit: (env) => env.CI_COMMIT_SHA,
  ref: (env) => fullRef(env, 'CI_COMMIT_TAG', 'CI_COMMIT_REF_NAME'),
  runUrl: (env) => httpUrl(env.CI_JOB_URL) ?? httpUrl(env.CI_PIPELINE_URL),
  missingSetupHint: (audience, options) => `no OIDC token: ${setup(audience, options)}`,
};
