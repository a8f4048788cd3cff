/**
 * Buildkite agent OIDC tokens (`buildkite-agent oidc request-token --audience <aud> --claim organization_id`). One issuer,
 * https://agent.buildkite.com, for every organisation: a rule must name its organisation. Claims and the subject:
 * Buildkite Docs, "buildkite-agent oidc" (buildkite.com/docs/agent/cli/reference/oidc), and a real decoded token
 * (rubygems/rubygems.org issue 5412): `build_number` a number, `build_tag` and `step_key` null when unset, a `jti`,
 * `nbf` equal to `iat`, no `typ`. The token says nothing of pull requests; a fork's build is named
 * `<owner>:<branch>` (Buildkite's default), refused here outright, and a branch pattern (no colon) never matches it.
 */
import { MAX_WILDCARDS, wildcardCount, wildcardMatches } from '../subject';
import { provenanceClaim } from './github';
import { at, fail, nameMatches, namePattern, onlyWildcards, problems } from './fields';
import { claimText, exactAudience, foreignFieldErrors, type ProviderModel, type RuleConditions } from './model';

const OWN_FIELDS = ['organizationSlug', 'pipelineSlug', 'branch', 'organizationId'] as const;
/**
 * Builds another pipeline's step created (`trigger_job`): their branch and commit are whatever the triggering step
 * wrote, a fork's pull-request build included, and Buildkite protects no branch. Refused whatever the rules say.
 */
const TRIGGERED_SOURCES = ['trigger_job'];
const SLUG = /^[a-z0-9][a-z0-9-]{0,99}$/;
const PIPELINE_PATTERN = /^[a-z0-9*][a-z0-9*-]{0,99}$/;

/** The ref Buildkite writes into `sub`: the tag's when the build has one, else the branch's. */
function refOf(claims: Readonly<Record<string, unknown>>): string | null {
  const tag = claimText(claims, 'build_tag');
  if (tag) return `refs/tags/${tag}`;
  const branch = claimText(claims, 'build_branch');
  return branch === null ? null : `refs/heads/${branch}`;
}

function tokenRefusal(claims: Readonly<Record<string, unknown>>) {
  const branch = claimText(claims, 'build_branch');
  // `<owner>:<branch>`: a pull request from a fork (a branch name cannot hold a colon in git).
  if (branch !== null && branch.includes(':')) return 'pull_request' as const;
  const source = claimText(claims, 'build_source');
  if (source !== null && TRIGGERED_SOURCES.includes(source)) return 'untrusted_trigger' as const;
  const ref = refOf(claims);
  const step = claims.step_key === null || claims.step_key === undefined ? '' : claimText(claims, 'step_key');
  const made = `organization:${claimText(claims, 'organization_slug')}:pipeline:${claimText(claims, 'pipeline_slug')}:ref:${ref}:commit:${claimText(claims, 'build_commit')}:step:${step}`;
  const sub = claimText(claims, 'sub');
  if (sub === made) return null;
  return sub !== null && sub.startsWith('organization:') ? ('subject_mismatch' as const) : ('subject_unrecognized' as const);
}

function firstFailure(rule: RuleConditions, claims: Readonly<Record<string, unknown>>) {
  const organization = claimText(claims, 'organization_slug');
  if (rule.organizationSlug !== organization) return fail('organizationSlug', rule.organizationSlug ?? '', organization);
  const organizationId = claimText(claims, 'organization_id');
  if (rule.organizationId != null && rule.organizationId !== organizationId) return fail('organizationId', rule.organizationId, organizationId);
  const pipeline = claimText(claims, 'pipeline_slug');
  if (rule.pipelineSlug != null && !nameMatches(rule.pipelineSlug, pipeline, { ignoreCase: false })) return fail('pipelineSlug', rule.pipelineSlug, pipeline);
  const branch = claimText(claims, 'build_branch');
  if (rule.branch != null && (branch === null || !wildcardMatches(rule.branch, branch, { ignoreCase: false }))) return fail('branch', rule.branch, branch);
  return null;
}

export const BUILDKITE: ProviderModel = {
  id: 'buildkite',
  token: { jti: true, nbfLeadS: 0, audience: exactAudience },
  requiredClaims: ['sub', 'organization_slug', 'pipeline_slug', 'build_number', 'build_branch', 'build_commit', 'job_id', 'jti'],
  optionalClaims: ['build_tag', 'step_key', 'build_source', 'runner_environment', 'organization_id', 'pipeline_id', 'build_id'],
  ignoredClaims: ['agent_id', 'cluster_id', 'cluster_name', 'queue_id', 'queue_key'],
  ruleClaims: (claims) => Object.fromEntries(['sub', 'organization_slug', 'pipeline_slug', 'build_branch', 'build_tag', 'build_source'].map((name) => [name, claimText(claims, name)])),
  tokenRefusal,
  ruleErrors: (input) => {
    const errors = [...foreignFieldErrors(input, OWN_FIELDS)];
    if (input.organizationSlug == null) errors.push(at('/organizationSlug', 'required: Buildkite\'s issuer is shared by every organisation, the rule must name its own'));
    else if (!SLUG.test(input.organizationSlug)) errors.push(at('/organizationSlug', 'must be an organisation slug (lower case letters, digits, -), compared exactly'));
    const pipeline = input.pipelineSlug;
    if (pipeline != null && (!PIPELINE_PATTERN.test(pipeline) || wildcardCount(pipeline) > MAX_WILDCARDS)) errors.push(at('/pipelineSlug', `a pipeline slug, * allowed (at most ${MAX_WILDCARDS})`));
    else if (pipeline != null && onlyWildcards(pipeline)) errors.push(at('/pipelineSlug', 'a pipeline that is only * is not allowed: leave it out and name a branch, or name the pipeline'));
    errors.push(...problems(namePattern('/branch', input.branch, { allowSlash: true, max: 256 })));
    const restricts = (pipeline != null && !pipeline.startsWith('*')) || (input.branch != null && !input.branch.startsWith('*'));
    if (input.organizationSlug != null && !restricts) errors.push(at('/pipelineSlug', 'no real restriction: name a pipeline or a branch'));
    return errors;
  },
  firstFailure,
  namesTenant: (rule, claims) => rule.organizationSlug != null && rule.organizationSlug === claimText(claims, 'organization_slug'),
  // A slug can be given up and taken by another organisation: the immutable id is pinned on first use, from the
  // `organization_id` claim shieldgate-ci asks for (`--claim organization_id`). A token without it pins nothing, and a
  // pinned rule refuses it.
  pinsOf: (_rule, claims) => {
    const id = claimText(claims, 'organization_id');
    return id === null ? null : { owner: { field: 'organizationId', value: id }, project: null };
  },
  provenance: (claims) => {
    const organization = claimText(claims, 'organization_slug');
    const pipeline = claimText(claims, 'pipeline_slug');
    return {
      provider: 'buildkite',
      repository: organization && pipeline ? `${organization}/${pipeline}`.slice(0, 512) : null,
      repositoryId: provenanceClaim(claims, 'pipeline_id'),
      workflowRef: provenanceClaim(claims, 'step_key'),
      sha: provenanceClaim(claims, 'build_commit'),
      ref: refOf(claims)?.slice(0, 512) ?? null,
      runId: provenanceClaim(claims, 'build_number'),
      runAttempt: null,
      eventName: provenanceClaim(claims, 'build_source'),
      runnerEnvironment: provenanceClaim(claims, 'runner_environment'),
    };
  },
};
