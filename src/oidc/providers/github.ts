/**
 * GitHub Actions as one provider of the model: the rules, subjects and refusals of rounds 1 to 3, unchanged
 * (`rule-policy.ts`, `rule-evaluator.ts`, `subject.ts` hold GitHub's own logic; this file only declares it).
 * Claims: GitHub Docs, "OpenID Connect reference".
 */
import { firstFailure, ruleClaimsOf, tokenRefusal, type RuleConditions as GitHubRule } from '../rule-evaluator';
import { gitHubFieldErrors } from '../rule-policy';
import { parsePattern, splitRepository } from '../subject';
import { claimText, exactAudience, foreignFieldErrors, type BuildProvenance, type ProviderModel, type RuleConditions } from './model';

const OWN_FIELDS = ['subjectPattern', 'workflowRef', 'environment', 'repositoryId', 'repositoryOwnerId', 'events'] as const;

const asGitHubRule = (rule: RuleConditions): GitHubRule => ({
  _id: rule._id,
  subjectPattern: rule.subjectPattern ?? '',
  workflowRef: rule.workflowRef ?? null,
  environment: rule.environment ?? null,
  repositoryId: rule.repositoryId ?? null,
  repositoryOwnerId: rule.repositoryOwnerId ?? null,
  events: rule.events ?? null,
  scopes: rule.scopes,
});

const MAX_PROVENANCE_CLAIM = 512;
const provenanceClaim = (claims: Readonly<Record<string, unknown>>, name: string) => claimText(claims, name)?.slice(0, MAX_PROVENANCE_CLAIM) || null;

export const GITHUB: ProviderModel = {
  id: 'github',
  // GitHub's issuer sets nbf before iat (its documented example): the lifetime counts from the earlier of the two.
  token: { jti: true, nbfLeadS: null, audience: exactAudience },
  requiredClaims: ['sub', 'repository', 'jti'],
  optionalClaims: ['repository_id', 'repository_owner_id', 'ref', 'environment', 'event_name', 'job_workflow_ref', 'sha', 'run_id', 'run_attempt', 'runner_environment'],
  ignoredClaims: [
    'actor', 'actor_id', 'base_ref', 'head_ref', 'ref_protected', 'ref_type', 'repository_owner', 'repository_visibility', 'run_number',
    'workflow', 'workflow_ref', 'workflow_sha', 'job_workflow_sha', 'check_run_id', 'enterprise', 'enterprise_id',
  ],
  ruleClaims: (claims) => ({ ...ruleClaimsOf(claims) }),
  tokenRefusal,
  ruleErrors: (input) => [
    ...foreignFieldErrors(input, OWN_FIELDS),
    ...gitHubFieldErrors({ ...input, subjectPattern: input.subjectPattern ?? '' }),
  ],
  firstFailure: (rule, claims) => firstFailure(asGitHubRule(rule), ruleClaimsOf(claims)),
  namesTenant: (rule, claims) => {
    const owner = splitRepository(claimText(claims, 'repository'))?.owner.toLowerCase();
    return (
      (owner !== undefined && parsePattern(rule.subjectPattern ?? '')?.owner.toLowerCase() === owner) ||
      (rule.repositoryOwnerId != null && rule.repositoryOwnerId === claims.repository_owner_id)
    );
  },
  pinsOf: (rule, claims) => {
    const ownerId = claimText(claims, 'repository_owner_id');
    if (ownerId === null) return null; // GitHub always sends it; nothing to pin to otherwise
    const repositoryId = claimText(claims, 'repository_id');
    // The repository is pinned only when the pattern names one repository (no `*`).
    const oneRepository = !(parsePattern(rule.subjectPattern ?? '')?.repo.includes('*') ?? true);
    return {
      owner: { field: 'repositoryOwnerId', value: ownerId },
      project: oneRepository && repositoryId !== null ? { field: 'repositoryId', value: repositoryId } : null,
    };
  },
  provenance: (claims): BuildProvenance => ({
    provider: 'github',
    repository: provenanceClaim(claims, 'repository'),
    repositoryId: provenanceClaim(claims, 'repository_id'),
    workflowRef: provenanceClaim(claims, 'job_workflow_ref'),
    sha: provenanceClaim(claims, 'sha'),
    ref: provenanceClaim(claims, 'ref'),
    runId: provenanceClaim(claims, 'run_id'),
    runAttempt: provenanceClaim(claims, 'run_attempt'),
    eventName: provenanceClaim(claims, 'event_name'),
    runnerEnvironment: provenanceClaim(claims, 'runner_environment'),
  }),
};

export { provenanceClaim };
