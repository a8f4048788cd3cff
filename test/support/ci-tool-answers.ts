/**
 * What the CI tools that mint a job's token print when they cannot, for the fakes the tests put on PATH.
 * buildkite-agent: its logger's error line, then the agent API's refusal (buildkite/agent, clicommand/
 * oidc_request_token.go). circleci: CircleCI documents no error text for `circleci run oidc get` outside a job; this
 * line is an approximation, and the client only ever shows the first stderr line, whatever it says.
 */
export const BUILDKITE_AGENT_REFUSAL = [
  '2026-05-04 10:00:00 ERROR  Could not obtain OIDC token for audience https://api.example.com',
  'fatal: POST https://agent.buildkite.com/v3/jobs/0189/oidc/tokens: 403 Forbidden',
];
export const CIRCLECI_REFUSAL = ['Error: failed to get OIDC token: this command can only be run within a CircleCI job', 'exit status 1'];
