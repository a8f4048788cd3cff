/**
 * GitHub's rule checks: the claims of a GitHub Actions token in, the first check of a rule it fails (what the rule
 * expected and what the token said) and what refuses the token whatever the rules say. The model of providers
 * (providers/github.ts) declares them; providers/evaluate.ts runs every provider's rules alike. Pure.
 */
import type { RefusalReason } from './refusal';
import { isPullRequestEvent } from './rule-policy';
import { parsePattern, splitRepository, subjectProblem, wildcardMatches, type ClaimText } from './subject';

/** The fields of a stored rule that matching reads. */
export interface RuleConditions {
  _id: string;
  subjectPattern: string;
  workflowRef: string | null;
  environment: string | null;
  repositoryId: string | null;
  repositoryOwnerId: string | null;
  events?: string[] | null; // absent on rules stored before the field existed: no allowlist
  scopes: string[];
}

/** The claims rules look at, as the token states them (the audit of a refusal records exactly these). */
export interface RuleClaims {
  sub: ClaimText;
  repository: ClaimText;
  repository_id: ClaimText;
  repository_owner_id: ClaimText;
  ref: ClaimText;
  environment: ClaimText;
  event_name: ClaimText;
  job_workflow_ref: ClaimText;
}

export const RULE_CLAIM_NAMES = ['sub', 'repository', 'repository_id', 'repository_owner_id', 'ref', 'environment', 'event_name', 'job_workflow_ref'] as const;

/** Names of the checks, in the order they run: the rule field each one reads. */
export type RuleCheck =
  | 'subjectPattern'
  | 'subjectPattern.repository'
  | 'subjectPattern.ref'
  | 'subjectPattern.environment'
  | 'workflowRef'
  | 'environment'
  | 'repositoryId'
  | 'repositoryOwnerId'
  | 'events';

export interface FailedCheck {
  check: RuleCheck;
  expected: string;
  actual: string | null;
}

/** Events refused unless a matching rule lists them: a workflow_run job runs after, and on behalf of, another. */
const LISTED_ONLY_EVENTS = ['workflow_run'];

const claimText = (value: unknown): ClaimText => (typeof value === 'string' ? value : null);

/** The claims rules look at, read from a decoded token payload; anything that is not a string counts as absent. */
export function ruleClaimsOf(payload: Readonly<Record<string, unknown>>): RuleClaims {
  const claims = {} as Record<(typeof RULE_CLAIM_NAMES)[number], ClaimText>;
  for (const name of RULE_CLAIM_NAMES) claims[name] = claimText(payload[name]);
  return claims;
}

/** Why the token is refused whatever the rules say, or null. */
export function tokenRefusal(payload: Readonly<Record<string, unknown>>): RefusalReason | null {
  const claims = ruleClaimsOf(payload);
  if (!claims.sub) return 'missing_claim';
  if (!splitRepository(claims.repository)) return 'missing_claim';
  // Pull-request jobs run code from forks: never trusted, even when a rule would match (spec check 6).
  if (claims.event_name !== null && isPullRequestEvent(claims.event_name)) return 'pull_request';
  return subjectProblem(claims.sub, payload);
}

const fail = (check: RuleCheck, expected: string, actual: ClaimText): FailedCheck => ({ check, expected, actual });

/** The first check of the rule that the claims fail, or null when the rule matches. */
export function firstFailure(rule: RuleConditions, claims: RuleClaims): FailedCheck | null {
  const pattern = parsePattern(rule.subjectPattern);
  if (!pattern || (pattern.kind !== 'ref' && pattern.kind !== 'environment')) return fail('subjectPattern', rule.subjectPattern, claims.sub);
  // The repository comes from the verified `repository` claim, whatever form the subject takes.
  const repository = splitRepository(claims.repository);
  const ownerMatches = repository !== null && repository.owner.toLowerCase() === pattern.owner.toLowerCase();
  if (!ownerMatches || !wildcardMatches(pattern.repo, repository.repo, { ignoreCase: true })) {
    return fail('subjectPattern.repository', `${pattern.owner}/${pattern.repo}`, claims.repository);
  }
  if (pattern.kind === 'ref' && (claims.ref === null || !wildcardMatches(pattern.value, claims.ref, { ignoreCase: false }))) {
    return fail('subjectPattern.ref', pattern.value, claims.ref);
  }
  if (pattern.kind === 'environment' && (claims.environment === null || !wildcardMatches(pattern.value, claims.environment, { ignoreCase: false }))) {
    return fail('subjectPattern.environment', pattern.value, claims.environment);
  }
  if (rule.workflowRef !== null && rule.workflowRef !== claims.job_workflow_ref) return fail('workflowRef', rule.workflowRef, claims.job_workflow_ref);
  if (rule.environment !== null && rule.environment !== claims.environment) return fail('environment', rule.environment, claims.environment);
  if (rule.repositoryId !== null && rule.repositoryId !== claims.repository_id) return fail('repositoryId', rule.repositoryId, claims.repository_id);
  if (rule.repositoryOwnerId !== null && rule.repositoryOwnerId !== claims.repository_owner_id) {
    return fail('repositoryOwnerId', rule.repositoryOwnerId, claims.repository_owner_id);
  }
  const events = rule.events ?? null;
  const event = claims.event_name;
  if (events === null) {
    if (event !== null && LISTED_ONLY_EVENTS.includes(event)) return fail('events', `any event but ${LISTED_ONLY_EVENTS.join(', ')} (list it to allow it)`, event);
  } else if (event === null || !events.includes(event)) {
    return fail('events', events.join(', '), event);
  }
  return null;
}
