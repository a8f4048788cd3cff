/**
 * GitHub Actions: the runner hands out the job's token on request (`permissions: id-token: write` gives the step
 * ACTIONS_ID_TOKEN_REQUEST_URL and _TOKEN), a fresh one for every exchange. The request itself lives in ../github.ts
 * with the rest of what a step can do in GitHub Actions.
 */
import { CliError } from '../errors';
import { canRequestIdToken, inGitHubActions, requestIdToken } from '../github';
import { httpUrl } from './shared';
import { defaultTokenOptions, type CiProvider } from './types';

export const github: CiProvider = {
  name: 'GitHub Actions',
  oneTokenPerJob: false,
  commitVariable: 'GITHUB_SHA',
  // The token endpoint alone counts too, as it always has: a step may run with GITHUB_ACTIONS unset.
  detect: (env) => inGitHubActions(env) || canRequestIdToken(env),
  idToken: async (env, audience) => {
    if (!canRequestIdToken(env)) throw new CliError(github.missingSetupHint(audience, defaultTokenOptions()));
    return requestIdToken(env, audience);
  },
  commit: (env) => env.GITHUB_SHA,
  ref: (env) => env.GITHUB_REF || undefined,
  runUrl: (env) =>
    env.GITHUB_REPOSITORY && /^\d{1,20}$/.test(env.GITHUB_RUN_ID ?? '')
      ? httpUrl(`${env.GITHUB_SERVER_URL || 'https://github.com'}/${env.GITHUB_REPOSITORY}/actions/runs/${env.GITHUB_RUN_ID}`)
      : undefined,
  missingSetupHint: () => 'no OIDC token: add "permissions: id-token: write" to the job (docs/keyless-ci.md, GitHub Actions)',
};
