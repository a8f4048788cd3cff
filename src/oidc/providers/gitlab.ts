/**
 * GitLab CI/CD ID tokens (`id_tokens:` in `.gitlab-ci.yml`), gitlab.com or a self-managed instance. Claims and the
 * subject's shape: GitLab Docs, "OpenID Connect (OIDC) Authentication Using ID Tokens" (docs.gitlab.com/ci/secrets/
 * id_token_authentication/); what to pin and refuse follows PyPI's GitLab publisher (warehouse
 * `oidc/models/gitlab.py`). GitLab sends ids as strings and `ref_protected` as "true"/"false"; `nbf` is 5 s before
 * `iat`, and `exp` is `iat` plus the job's timeout.
 */
import { MAX_WILDCARDS, wildcardCount, wildcardMatches } from '../subject';
import { provenanceClaim } from './github';
import { at, exactName, fail, nameMatches, namePattern, numericId, onlyWildcards, problems, type Problem } from './fields';
import { claimText, exactAudience, foreignFieldErrors, type ProviderModel, type RuleConditions, type RuleInput } from './model';

const OWN_FIELDS = ['subjectPattern', 'environment', 'namespaceId', 'projectId', 'configRef', 'protectedRefOnly'] as const;
const PATTERN = /^project_path:([^:]+):ref_type:([^:]+):ref:([^:]*)$/;
const PATH_SEGMENT = /^[A-Za-z0-9_.*-]{1,255}$/;
const CONFIG_REF = /^[^\s*@]+\/\/[^\s*@]+@refs\/(heads|tags)\/[^\s*]+$/;
const SHAPE = 'project_path:<group>/<project>:ref_type:<branch|tag>:ref:<ref>';
/** Merge-request pipelines run the code a merge request proposes, a fork's included. */
const MERGE_REQUEST_SOURCES = ['merge_request_event', 'external_pull_request_event'];
/** Pipelines another pipeline started: trusted only on a protected ref, which only maintainers can push to. */
const TRIGGERED_SOURCES = ['parent_pipeline', 'pipeline'];

interface GitLabPattern {
  path: string;
  refType: string;
  ref: string;
}

const parse = (pattern: string | null | undefined): GitLabPattern | null => {
  const m = pattern ? PATTERN.exec(pattern) : null;
  return m ? { path: m[1], refType: m[2], ref: m[3] } : null;
};

function patternProblem(input: RuleInput): Problem {
  const pointer = '/subjectPattern';
  const pattern = input.subjectPattern;
  if (pattern == null) return at(pointer, `required: ${SHAPE}`);
  if (wildcardCount(pattern) > MAX_WILDCARDS) return at(pointer, `at most ${MAX_WILDCARDS} * per pattern`);
  const parsed = parse(pattern);
  if (!parsed) return at(pointer, `must have the shape ${SHAPE}`);
  const segments = parsed.path.split('/');
  if (segments.length < 2 || !segments.every((segment) => PATH_SEGMENT.test(segment))) return at(pointer, 'the project path must be <group>/<project> (subgroups allowed)');
  if (segments[0].includes('*')) return at(pointer, 'a wildcard top-level group is not allowed: it names the tenant');
  if (segments.slice(1).some(onlyWildcards)) return at(pointer, 'a subgroup or project that is only * is not allowed');
  if (parsed.refType !== 'branch' && parsed.refType !== 'tag') return at(pointer, 'ref_type must be branch or tag');
  if (parsed.ref.length === 0) return at(pointer, 'name a branch or a tag (a prefix with * is allowed)');
  const otherRestriction = Boolean(input.environment || input.configRef);
  if (parsed.ref.startsWith('*') && !otherRestriction) return at(pointer, 'no real restriction: name a branch or a tag prefix, or set environment or configRef');
  return null;
}

/** Merge-request and triggered pipelines; the subject must be the one GitLab makes of the token's own claims. */
function tokenRefusal(claims: Readonly<Record<string, unknown>>) {
  const source = claimText(claims, 'pipeline_source');
  if (source !== null && MERGE_REQUEST_SOURCES.includes(source)) return 'pull_request' as const;
  if (source !== null && TRIGGERED_SOURCES.includes(source) && claims.ref_protected !== 'true') return 'untrusted_trigger' as const;
  // GitLab 18.4+: the project that runs the job. Another than the token's project is a fork's merge request.
  const jobProject = claimText(claims, 'job_project_id');
  if (jobProject !== null && jobProject !== claimText(claims, 'project_id')) return 'pull_request' as const;
  const projectPath = claimText(claims, 'project_path');
  const refType = claimText(claims, 'ref_type');
  const ref = claimText(claims, 'ref');
  if (projectPath === null || ref === null || (refType !== 'branch' && refType !== 'tag')) return 'missing_claim' as const;
  const sub = claimText(claims, 'sub');
  if (sub === `project_path:${projectPath}:ref_type:${refType}:ref:${ref}`) return null;
  return sub !== null && sub.startsWith('project_path:') ? ('subject_mismatch' as const) : ('subject_unrecognized' as const);
}

function firstFailure(rule: RuleConditions, claims: Readonly<Record<string, unknown>>) {
  const pattern = parse(rule.subjectPattern);
  const path = claimText(claims, 'project_path');
  if (!pattern) return fail('subjectPattern', rule.subjectPattern ?? '', claimText(claims, 'sub'));
  // GitLab's paths are case-insensitive (a project answers to any case); refs are not.
  if (!nameMatches(pattern.path, path, { ignoreCase: true })) return fail('subjectPattern.projectPath', pattern.path, path);
  const refType = claimText(claims, 'ref_type');
  if (pattern.refType !== refType) return fail('subjectPattern.refType', pattern.refType, refType);
  const ref = claimText(claims, 'ref');
  // As GitHub's refs: `*` crosses `/` (release/* and release-* alike), never a colon.
  if (ref === null || !wildcardMatches(pattern.ref, ref, { ignoreCase: false })) return fail('subjectPattern.ref', pattern.ref, ref);
  const exact: [keyof RuleConditions, string][] = [
    ['namespaceId', 'namespace_id'],
    ['projectId', 'project_id'],
    ['configRef', 'ci_config_ref_uri'],
    ['environment', 'environment'],
  ];
  for (const [field, claim] of exact) {
    const expected = rule[field] as string | null | undefined;
    if (expected != null && expected !== claimText(claims, claim)) return fail(field, expected, claimText(claims, claim));
  }
  if (rule.protectedRefOnly && claims.ref_protected !== 'true') return fail('protectedRefOnly', 'true', claimText(claims, 'ref_protected'));
  return null;
}

const topGroup = (path: string | null | undefined) => path?.split('/')[0]?.toLowerCase() ?? null;

export const GITLAB: ProviderModel = {
  id: 'gitlab',
  token: { jti: true, nbfLeadS: 5, audience: exactAudience },
  requiredClaims: ['sub', 'project_path', 'project_id', 'namespace_id', 'namespace_path', 'ref', 'ref_type', 'ref_protected', 'pipeline_source', 'pipeline_id', 'sha', 'jti'],
  optionalClaims: ['job_project_id', 'job_project_path', 'job_namespace_id', 'job_namespace_path', 'ci_config_ref_uri', 'environment', 'job_id', 'runner_environment', 'ref_path', 'ci_config_sha', 'environment_protected', 'deployment_tier', 'environment_action'],
  ignoredClaims: [
    'user_id', 'user_login', 'user_email', 'user_access_level', 'user_identities', 'groups_direct', 'runner_id', 'project_visibility', 'job_source',
  ],
  ruleClaims: (claims) =>
    Object.fromEntries(['sub', 'project_path', 'namespace_id', 'project_id', 'ref_type', 'ref', 'ref_protected', 'ci_config_ref_uri', 'environment', 'pipeline_source'].map((name) => [name, claimText(claims, name)])),
  tokenRefusal,
  ruleErrors: (input) => [
    ...foreignFieldErrors(input, OWN_FIELDS),
    ...problems(
      patternProblem(input),
      numericId('/namespaceId', input.namespaceId),
      numericId('/projectId', input.projectId),
      input.configRef != null && !CONFIG_REF.test(input.configRef)
        ? at('/configRef', 'must be the exact ci_config_ref_uri: <host>/<group>/<project>//<path>@refs/heads/<branch> (or refs/tags/<tag>), no wildcard')
        : null,
      exactName('/environment', input.environment, 255),
    ),
  ],
  firstFailure,
  namesTenant: (rule, claims) =>
    (rule.namespaceId != null && rule.namespaceId === claimText(claims, 'namespace_id')) ||
    (topGroup(parse(rule.subjectPattern)?.path) !== null && topGroup(parse(rule.subjectPattern)?.path) === topGroup(claimText(claims, 'project_path'))),
  pinsOf: (rule, claims) => {
    const namespaceId = claimText(claims, 'namespace_id');
    if (namespaceId === null) return null;
    const projectId = claimText(claims, 'project_id');
    const oneProject = !(parse(rule.subjectPattern)?.path.includes('*') ?? true);
    return { owner: { field: 'namespaceId', value: namespaceId }, project: oneProject && projectId !== null ? { field: 'projectId', value: projectId } : null };
  },
  provenance: (claims) => {
    const ref = claimText(claims, 'ref');
    const refType = claimText(claims, 'ref_type');
    const fullRef = ref === null ? null : refType === 'tag' ? `refs/tags/${ref}` : refType === 'branch' ? `refs/heads/${ref}` : null;
    return {
      provider: 'gitlab',
      repository: provenanceClaim(claims, 'project_path'),
      repositoryId: provenanceClaim(claims, 'project_id'),
      workflowRef: provenanceClaim(claims, 'ci_config_ref_uri'),
      sha: provenanceClaim(claims, 'sha'),
      ref: fullRef?.slice(0, 512) ?? null,
      runId: provenanceClaim(claims, 'pipeline_id'),
      runAttempt: null,
      eventName: provenanceClaim(claims, 'pipeline_source'),
      runnerEnvironment: provenanceClaim(claims, 'runner_environment'),
    };
  },
};
