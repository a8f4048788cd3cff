/**
 * Buildkite: the agent mints a token for any audience on request (`buildkite-agent oidc request-token`, agent
 * v3.41 and later), so every exchange gets a fresh one. Nothing to switch on in the pipeline; a step in a container
 * needs the agent binary and its job variables there (the docker plugin's `mount-buildkite-agent: true`).
 */
import { runTokenCommand } from './command';
import { fullRef, httpUrl } from './shared';
import type { CiProvider } from './types';

const DOCS = 'docs/keyless-ci.md, Buildkite';

export const buildkite: CiProvider = {
  name: 'Buildkite',
  oneTokenPerJob: false,
  commitVariable: 'BUILDKITE_COMMIT',
  detect: (env) => env.BUILDKITE === 'true',
  idToken: (env, audience, options) =>
    runTokenCommand(
      {
        file: 'buildkite-agent',
        // The organisation's immutable id, which the service pins a rule to (its slug can change hands).
        args: ['oidc', 'request-token', '--audience', audience, '--claim', 'organization_id'],
        missingTool: `run the step on a Buildkite agent v3.41 or later; in a container, add "mount-buildkite-agent: true" to the docker plugin; ${DOCS}`,
        docs: DOCS,
      },
      env,
      options.commandTimeoutMs,
    ),
  commit: (env) => env.BUILDKITE_COMMIT,
  ref: (env) => fullRef(env, 'BUILDKITE_TAG', 'BUILDKITE_BRANCH'),
  runUrl: (env) => httpUrl(env.BUILDKITE_BUILD_URL),
  missingSetupHint: (audience) => `no OIDC token: run "buildkite-agent oidc request-token --audience ${audience}" on the step's agent (agent v3.41 or later; ${DOCS})`,
};
