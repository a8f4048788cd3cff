/**
 * CircleCI OIDC tokens (`circleci run oidc get --claims '{"aud": "<aud>"}'`). An issuer per organisation,
 * https://oidc.circleci.com/org/<organization id>; the root issuer (`--root-issuer`) is no tenant's and is refused
 * (issuers.ts). Claims and subject: CircleCI Docs, "Using OpenID Connect tokens in jobs" and "OIDC tokens with custom
 * claims": claims namespaced `oidc.circleci.com/`, `context-ids` an array, `ssh-rerun` a boolean, no `jti` and no
 * `nbf`, one hour of life. What to pin and refuse follows PyPI's proposed CircleCI publisher (warehouse pull request
 * 19349): the organisation (the issuer), the project, and no SSH re-runs (a person at a shell holds the job's token).
 */
import { wildcardMatches } from '../subject';
import { provenanceClaim } from './github';
import { at, exactName, fail, namePattern, problems, uuid } from './fields';
import { claimText, exactAudience, foreignFieldErrors, type ProviderModel, type RuleConditions } from './model';

const OWN_FIELDS = ['projectId', 'contextIds', 'branch', 'vcsOrigin'] as const;
const NS = 'oidc.circleci.com/';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISSUER_ORG = /\/org\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;
/** Refs a job of the project's own branches and tags has; a fork's pull request has another (`refs/pull/...`). */
const OWN_REFS = /^refs\/(heads|tags)\/[^\s]+$/;
const MAX_CONTEXTS = 16;

const orgOfIssuer = (claims: Readonly<Record<string, unknown>>) => ISSUER_ORG.exec(claimText(claims, 'iss') ?? '')?.[1] ?? null;
/** The job's contexts: an array in a token; its JSON text in a dry-run's pasted claims. */
const contextsOf = (claims: Readonly<Record<string, unknown>>): string[] | null => {
  let value = claims[`${NS}context-ids`];
  if (typeof value === 'string' && value.startsWith('[') && value.length <= 4096) {
    try {
      value = JSON.parse(value);
    } catch {
      return null;
    }
  }
  return Array.isArray(value) && value.every((id) => typeof id === 'string') ? (value as string[]) : null;
};

function tokenRefusal(claims: Readonly<Record<string, unknown>>) {
  // A boolean in a token; its text in a dry-run's pasted claims. Anything else is not CircleCI's.
  const rerun = claims[`${NS}ssh-rerun`];
  if (rerun === true || rerun === 'true') return 'untrusted_trigger' as const;
  if (rerun !== undefined && rerun !== false && rerun !== 'false') return 'malformed' as const;
  const org = claimText(claims, `${NS}org-id`) ?? orgOfIssuer(claims);
  // The organisation is the issuer's; a token naming another in its claims is not this organisation's.
  if (org === null || org !== orgOfIssuer(claims)) return 'subject_mismatch' as const;
  const project = claimText(claims, `${NS}project-id`);
  if (project === null || !UUID.test(project)) return 'malformed' as const;
  // A fork's pull request (when the project passes secrets to forks) runs on a ref of the pull request.
  const ref = claimText(claims, `${NS}vcs-ref`);
  if (ref !== null && !OWN_REFS.test(ref)) return 'pull_request' as const;
  // `org/<org>/project/<project>/user/<user>`, then in the newer form `/vcs-origin/<origin>/vcs-ref/<ref>`: compared
  // piece by piece with the token's own claims (text, never a pattern built from them).
  const sub = claimText(claims, 'sub') ?? '';
  const head = `org/${org}/project/${project}/user/`;
  if (!sub.startsWith(head)) return sub.startsWith('org/') ? ('subject_mismatch' as const) : ('subject_unrecognized' as const);
  const user = sub.slice(head.length, head.length + 36);
  if (!UUID.test(user)) return 'subject_unrecognized' as const;
  const rest = sub.slice(head.length + 36);
  if (rest === '') return null;
  const origin = claimText(claims, `${NS}vcs-origin`);
  return rest === `/vcs-origin/${origin}/vcs-ref/${ref}` ? null : ('subject_mismatch' as const);
}

function firstFailure(rule: RuleConditions, claims: Readonly<Record<string, unknown>>) {
  const project = claimText(claims, `${NS}project-id`);
  if (rule.projectId !== project) return fail('projectId', rule.projectId ?? '', project);
  const origin = claimText(claims, `${NS}vcs-origin`);
  if (rule.vcsOrigin != null && rule.vcsOrigin !== origin) return fail('vcsOrigin', rule.vcsOrigin, origin);
  const contexts = contextsOf(claims) ?? [];
  const missing = (rule.contextIds ?? []).find((id) => !contexts.includes(id));
  if (missing !== undefined) return fail('contextIds', missing, contexts.join(',') || null);
  const ref = claimText(claims, `${NS}vcs-ref`);
  const branch = ref?.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : null;
  if (rule.branch != null && (branch === null || !wildcardMatches(rule.branch, branch, { ignoreCase: false }))) return fail('branch', rule.branch, ref);
  return null;
}

export const CIRCLECI: ProviderModel = {
  id: 'circleci',
  token: { jti: false, nbfLeadS: 0, audience: exactAudience },
  requiredClaims: ['sub', `${NS}project-id`],
  optionalClaims: [`${NS}org-id`, `${NS}context-ids`, `${NS}vcs-origin`, `${NS}vcs-ref`, `${NS}ssh-rerun`, `${NS}pipeline-id`, `${NS}pipeline-definition-id`, `${NS}workflow-id`, `${NS}job-id`],
  ignoredClaims: [],
  ruleClaims: (claims) => ({
    ...Object.fromEntries(['sub', `${NS}project-id`, `${NS}vcs-origin`, `${NS}vcs-ref`].map((name) => [name, claimText(claims, name)])),
    [`${NS}context-ids`]: contextsOf(claims)?.join(',') ?? null,
  }),
  tokenRefusal,
  ruleErrors: (input) => {
    const errors = [
      ...foreignFieldErrors(input, OWN_FIELDS),
      ...problems(uuid('/projectId', input.projectId, { required: true }), namePattern('/branch', input.branch, { allowSlash: true, max: 256 }), exactName('/vcsOrigin', input.vcsOrigin, 512)),
    ];
    // The project alone admits every job of it, pull requests' included: a branch or a context must narrow it.
    const restricts = (input.branch != null && !input.branch.startsWith('*')) || (input.contextIds != null && input.contextIds.length > 0);
    if (input.projectId != null && !restricts) errors.push(at('/branch', 'no real restriction: name a branch (or a tag prefix) or the contexts the job must have'));
    const contexts = input.contextIds;
    if (contexts != null) {
      if (contexts.length === 0 || contexts.length > MAX_CONTEXTS) errors.push(at('/contextIds', `1 to ${MAX_CONTEXTS} context ids, or leave it out`));
      contexts.forEach((id, i) => {
        const problem = uuid(`/contextIds/${i}`, id, { required: true });
        if (problem) errors.push(problem);
      });
    }
    return errors;
  },
  firstFailure,
  namesTenant: (rule, claims) => rule.projectId != null && rule.projectId === claimText(claims, `${NS}project-id`),
  // The project's repository, pinned on first use: a fork's pull request (when the project passes secrets to forks)
  // carries the fork's `vcs-origin`.
  pinsOf: (_rule, claims) => {
    const origin = claimText(claims, `${NS}vcs-origin`);
    return origin === null ? null : { owner: { field: 'vcsOrigin', value: origin }, project: null };
  },
  provenance: (claims) => ({
    provider: 'circleci',
    repository: provenanceClaim(claims, `${NS}vcs-origin`),
    repositoryId: provenanceClaim(claims, `${NS}project-id`),
    workflowRef: provenanceClaim(claims, `${NS}pipeline-definition-id`),
    sha: null, // CircleCI's token names no commit
    ref: provenanceClaim(claims, `${NS}vcs-ref`),
    runId: provenanceClaim(claims, `${NS}pipeline-id`),
    runAttempt: null,
    eventName: null,
    runnerEnvironment: null,
  }),
};
