/**
 * Bitbucket Pipelines OIDC tokens (`oidc: true` on a step, `BITBUCKET_STEP_OIDC_TOKEN`). An issuer per workspace,
 * https://api.bitbucket.org/2.0/workspaces/<workspace>/pipelines-config/identity/oidc. Claims and subject: Atlassian,
 * "Integrate Pipelines with resource servers using OIDC", and "Bitbucket Pipelines OIDC now supports multiple
 * audiences": UUIDs in braces, `sub` `{repository}:{step}` or `{repository}:{environment}:{step}`, no `jti` and no
 * `nbf`. Its audience is fixed (`ari:cloud:bitbucket::workspace/<uuid>`) unless the step lists its own
 * (`oidc: audiences:`), and then `aud` is an array of that fixed one and ours: accepted exactly in that form (the
 * workspace's own audience and ours, nothing else), never a token for other audiences. The token names no commit and
 * says nothing of pull requests, so a rule names its workspace and repository by UUID (a name can be re-used).
 */
import { wildcardMatches } from '../subject';
import { provenanceClaim } from './github';
import { at, bracedUuid, fail, namePattern, problems } from './fields';
import { claimText, foreignFieldErrors, type ProviderModel, type RuleConditions, type TokenShape } from './model';

const OWN_FIELDS = ['workspaceUuid', 'repositoryUuid', 'branch', 'deploymentEnvironmentUuid'] as const;

const workspaceAudience = (workspaceUuid: string | null) => (workspaceUuid ? `ari:cloud:bitbucket::workspace/${workspaceUuid.replace(/^\{|\}$/g, '')}` : null);

/** Ours alone, or exactly [the workspace's fixed audience, ours] in either order. */
const audience: TokenShape['audience'] = (aud, ours, claims) => {
  if (aud === ours) return true;
  if (!Array.isArray(aud) || aud.length !== 2) return false;
  const fixed = workspaceAudience(claimText(claims, 'workspaceUuid'));
  return fixed !== null && aud.includes(ours) && aud.includes(fixed);
};

function tokenRefusal(claims: Readonly<Record<string, unknown>>) {
  const parts = [claimText(claims, 'repositoryUuid'), claimText(claims, 'deploymentEnvironmentUuid'), claimText(claims, 'stepUuid')].filter((part) => part !== null);
  const sub = claimText(claims, 'sub');
  if (sub === parts.join(':')) return null;
  return sub !== null && sub.startsWith('{') ? ('subject_mismatch' as const) : ('subject_unrecognized' as const);
}

function firstFailure(rule: RuleConditions, claims: Readonly<Record<string, unknown>>) {
  const checks: [keyof RuleConditions, string][] = [
    ['workspaceUuid', 'workspaceUuid'],
    ['repositoryUuid', 'repositoryUuid'],
    ['deploymentEnvironmentUuid', 'deploymentEnvironmentUuid'],
  ];
  for (const [field, claim] of checks) {
    const expected = rule[field] as string | null | undefined;
    if (expected != null && expected !== claimText(claims, claim)) return fail(field, expected, claimText(claims, claim));
  }
  const branch = claimText(claims, 'branchName');
  if (rule.branch != null && (branch === null || !wildcardMatches(rule.branch, branch, { ignoreCase: false }))) return fail('branch', rule.branch, branch);
  return null;
}

export const BITBUCKET: ProviderModel = {
  id: 'bitbucket',
  token: { jti: false, nbfLeadS: 0, audience },
  requiredClaims: ['sub', 'workspaceUuid', 'repositoryUuid', 'pipelineUuid', 'stepUuid'],
  optionalClaims: ['branchName', 'deploymentEnvironmentUuid', 'pipelineRunUuid'],
  ignoredClaims: ['compliant'],
  ruleClaims: (claims) => Object.fromEntries(['sub', 'workspaceUuid', 'repositoryUuid', 'deploymentEnvironmentUuid', 'branchName'].map((name) => [name, claimText(claims, name)])),
  tokenRefusal,
  ruleErrors: (input) => {
    const errors = [
      ...foreignFieldErrors(input, OWN_FIELDS),
      ...problems(
        bracedUuid('/workspaceUuid', input.workspaceUuid, { required: true }),
        bracedUuid('/repositoryUuid', input.repositoryUuid, { required: true }),
        bracedUuid('/deploymentEnvironmentUuid', input.deploymentEnvironmentUuid, { required: false }),
        namePattern('/branch', input.branch, { allowSlash: true, max: 256 }),
      ),
    ];
    // The repository alone admits every step of it, its pull-request pipelines' included.
    const restricts = (input.branch != null && !input.branch.startsWith('*')) || input.deploymentEnvironmentUuid != null;
    if (input.repositoryUuid != null && !restricts) errors.push(at('/branch', 'no real restriction: name a branch (or a prefix) or a deployment environment'));
    return errors;
  },
  firstFailure,
  namesTenant: (rule, claims) => rule.workspaceUuid != null && rule.workspaceUuid === claimText(claims, 'workspaceUuid'),
  pinsOf: () => null, // named by UUID already
  provenance: (claims) => {
    const branch = claimText(claims, 'branchName');
    return {
      provider: 'bitbucket',
      repository: provenanceClaim(claims, 'repositoryUuid'),
      repositoryId: provenanceClaim(claims, 'repositoryUuid'),
      workflowRef: null,
      sha: null, // Bitbucket's token names no commit
      ref: branch ? `refs/heads/${branch}`.slice(0, 512) : null,
      runId: provenanceClaim(claims, 'pipelineUuid'),
      runAttempt: null,
      eventName: null,
      runnerEnvironment: null,
    };
  },
};
