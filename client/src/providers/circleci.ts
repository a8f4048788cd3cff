/**
 * CircleCI: the job's CIRCLE_OIDC_TOKEN has the organization's id as its audience, never ours, so it is not read;
 * the in-job CLI mints one for our audience on request (`circleci run oidc get --claims`), a fresh one for every
 * exchange. The CLI is in CircleCI's convenience images (cimg/*) and machine executors, not in every image.
 */
import { runTokenCommand } from './command';
import { fullRef, httpUrl } from './shared';
import type { CiProvider } from './types';

const DOCS = 'docs/keyless-ci.md, CircleCI';

export const circleci: CiProvider = {
  name: 'CircleCI',
  oneTokenPerJob: false,
  commitVariable: 'CIRCLE_SHA1',
  detect: (env) => env.CIRCLECI === 'true',
  idToken: (env, audience, options) =>
    runTokenCommand(
      {
        file: 'circleci',
        // JSON.stringify, so an audience is always one well-formed JSON string, whatever it holds.
        args: ['run', 'oidc', 'get', '--claims', JSON.stringify({ aud: audience })],
        missingTool: `run the job in an image that has the CircleCI CLI, such as a cimg/* convenience image or a machine executor; ${DOCS}`,
        docs: DOCS,
      },
      env,
      options.commandTimeoutMs,
    ),
  commit: (env) => env.CIRCLE_SHA1,
  ref: (env) => fullRef(env, 'CIRCLE_TAG', 'CIRCLE_BRANCH'),
  runUrl: (env) => httpUrl(env.CIRCLE_BUILD_URL),
  missingSetupHint: () => `no OIDC token: run the job where the CircleCI CLI's "circleci run oidc get" works (a cimg/* image or a machine executor; ${DOCS})`,
};
