/**
 * Bitbucket Pipelines: a step with OIDC turned on gets one token, in BITBUCKET_STEP_OIDC_TOKEN, for its whole life.
 * Its audience is the workspace's own unless the step lists ours under `oidc: audiences:` (the token then carries
 * both, which the service accepts); a token without ours is never sent (see checkVariableToken).
 */
import { CliError } from '../errors';
import { checkVariableToken, fullRef, httpUrl } from './shared';
import { defaultTokenOptions, type CiProvider } from './types';

const VARIABLE = 'BITBUCKET_STEP_OIDC_TOKEN';
const setup = (audience: string) => `add "oidc: { audiences: [${audience}] }" to the step ("oidc: true" alone gives a token for the workspace's audience; docs/keyless-ci.md, Bitbucket Pipelines)`;

export const bitbucket: CiProvider = {
  name: 'Bitbucket Pipelines',
  oneTokenPerJob: true,
  commitVariable: 'BITBUCKET_COMMIT',
  detect: (env) => Boolean(env.BITBUCKET_BUILD_NUMBER),
  idToken: async (env, audience) => {
    const token = env[VARIABLE]?.trim();
    if (!token) throw new CliError(bitbucket.missingSetupHint(audience, defaultTokenOptions()));
    return checkVariableToken(token, VARIABLE, audience, true, setup(audience));
  },
  commit: (env) => env.BITBUCKET_COMMIT,
  ref: (env) => fullRef(env, 'BITBUCKET_TAG', 'BITBUCKET_BRANCH'),
  runUrl: (env) => {
    // BITBUCKET_GIT_HTTP_ORIGIN is the repository's web address, given as http://bitbucket.org/<workspace>/<repo>.
    const origin = env.BITBUCKET_GIT_HTTP_ORIGIN?.trim().replace(/^http:\/\/bitbucket\.org\//, 'https://bitbucket.org/').replace(/(\.git)?\/*$/, '');
    const build = env.BITBUCKET_BUILD_NUMBER?.trim();
    return origin && build && /^\d{1,12}$/.test(build) ? httpUrl(`${origin}/pipelines/results/${build}`) : undefined;
  },
  missingSetupHint: (audience) => `no OIDC token: ${setup(audience)}`,
};
