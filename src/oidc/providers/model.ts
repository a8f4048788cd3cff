/**
 * One model of CI providers, as PyPI's trusted publishing models them (warehouse `oidc/models`): each provider says
 * which claims every token of it carries, which it reads only when a rule names them, which it knows and ignores,
 * how its `sub` is made from the other claims, what it refuses whatever the rules say (pull requests, forks,
 * debugging sessions), which rules may exist, how a rule judges a token, and what a build records of the job.
 * The exchange, the dry-run and rule creation go through the model only: nothing above it names a provider's claims.
 * Pure: no I/O, no clock.
 */
import type { FieldError } from '../../core/errors';
import type { RefusalReason } from '../refusal';
import type { ClaimText } from '../subject';

export const PROVIDERS = ['github', 'gitlab', 'buildkite', 'circleci', 'bitbucket'] as const;
export type ProviderId = (typeof PROVIDERS)[number];
export const isProvider = (value: unknown): value is ProviderId => typeof value === 'string' && (PROVIDERS as readonly string[]).includes(value);

/** A rule as stored (and as created): GitHub's fields, the provider and issuer, and each provider's own pins. */
export interface RuleFields {
  /** Absent on rules stored before providers existed: GitHub. */
  provider?: ProviderId;
  /** The provider's issuer; null or absent for GitHub (the configured OIDC_ISSUER). */
  issuer?: string | null;
  subjectPattern?: string | null; // github, gitlab
  workflowRef?: string | null; // github
  environment?: string | null; // github, gitlab
  repositoryId?: string | null; // github
  repositoryOwnerId?: string | null; // github
  events?: string[] | null; // github
  namespaceId?: string | null; // gitlab
  projectId?: string | null; // gitlab, circleci
  configRef?: string | null; // gitlab
  protectedRefOnly?: boolean | null; // gitlab
  organizationSlug?: string | null; // buildkite
  pipelineSlug?: string | null; // buildkite
  branch?: string | null; // buildkite, circleci, bitbucket
  contextIds?: string[] | null; // circleci
  vcsOrigin?: string | null; // circleci, pinned on first use
  organizationId?: string | null; // buildkite, pinned on first use
  workspaceUuid?: string | null; // bitbucket
  repositoryUuid?: string | null; // bitbucket
  deploymentEnvironmentUuid?: string | null; // bitbucket
}

/** The input of a rule's creation: its fields and scopes (checked elsewhere, alike for every provider). */
export type RuleInput = RuleFields & { scopes: string[]; releaseBuilds?: boolean | null };

/** What a rule is judged by: its id and fields. */
export type RuleConditions = RuleFields & { _id: string; scopes: string[] };

/** The first check of a rule that a token failed: the rule field it reads, what it expected, what the token said. */
export interface FailedCheck {
  check: string;
  expected: string;
  actual: string | null;
}

/** What a build records of the job that registered it, from the verified claims, in one shape for every provider. */
export interface BuildProvenance {
  /** Absent on provenance recorded before providers existed: GitHub. */
  provider?: ProviderId;
  /** GitHub `owner/repo`, GitLab `group/project`, Buildkite `organization/pipeline`, CircleCI and Bitbucket ids. */
  repository: string | null;
  repositoryId: string | null;
  /** The pipeline definition the job ran: GitHub `job_workflow_ref`, GitLab `ci_config_ref_uri`. */
  workflowRef: string | null;
  sha: string | null;
  /** Always a full ref (`refs/heads/<branch>`, `refs/tags/<tag>`) when the provider says which. */
  ref: string | null;
  /** The run or pipeline: GitHub `run_id`, GitLab `pipeline_id`, Buildkite build number, CircleCI and Bitbucket pipeline ids. */
  runId: string | null;
  runAttempt: string | null;
  /** What started it: GitHub `event_name`, GitLab `pipeline_source`, Buildkite `build_source`. */
  eventName: string | null;
  runnerEnvironment: string | null;
}

/** How a provider's tokens live: what the verifier checks beyond the spec's common checks. */
export interface TokenShape {
  /** Every token carries a `jti` (one use by it); without one, one use is by the digest of the signed part. */
  jti: boolean;
  /** Seconds `nbf` may precede `iat`, or null when the lifetime is measured from the earlier of the two (GitHub). */
  nbfLeadS: number | null;
  /** Whether `aud` may be an array: only Bitbucket, and then only [ours, the workspace's own]. */
  audience: (aud: unknown, ours: string, claims: Readonly<Record<string, unknown>>) => boolean;
}

export interface ProviderModel {
  readonly id: ProviderId;
  readonly token: TokenShape;
  /** Claims every token carries, each a non-empty string or a number: one missing refuses the token. */
  readonly requiredClaims: readonly string[];
  /** Claims read when a rule sets the field that names them, or for provenance. */
  readonly optionalClaims: readonly string[];
  /** Claims known and deliberately not read (personal data, display names, counters). */
  readonly ignoredClaims: readonly string[];
  /** The claims rules look at, recorded in the refusal audit and the dry-run (never the token). */
  ruleClaims(claims: Readonly<Record<string, unknown>>): Record<string, ClaimText>;
  /** Why the token is refused whatever the rules say (sub not made from its claims, pull request, fork), or null. */
  tokenRefusal(claims: Readonly<Record<string, unknown>>): RefusalReason | null;
  /** Field errors of a rule of this provider that must not exist (the spec's rule 6, per provider). */
  ruleErrors(input: RuleInput): FieldError[];
  /** The first check of the rule that the claims fail, or null when it matches. */
  firstFailure(rule: RuleConditions, claims: Readonly<Record<string, unknown>>): FailedCheck | null;
  /** Whether the rule names the tenant the token comes from (so the tenant may see the token's claims in the audit). */
  namesTenant(rule: RuleConditions, claims: Readonly<Record<string, unknown>>): boolean;
  /** Pins on first use: the rule fields a first matching job fills, with the claim each takes. */
  pinsOf(rule: RuleConditions, claims: Readonly<Record<string, unknown>>): PinPlan | null;
  provenance(claims: Readonly<Record<string, unknown>>): BuildProvenance;
}

/** The owner-level pin (always) and the project-level pin (when the rule names one project) a first job sets. */
export interface PinPlan {
  owner: { field: 'repositoryOwnerId' | 'namespaceId' | 'vcsOrigin' | 'organizationId'; value: string };
  project: { field: 'repositoryId' | 'projectId'; value: string } | null;
}

/** A claim as text: strings as they are, safe integers as digits, anything else absent. */
export function claimText(claims: Readonly<Record<string, unknown>>, name: string): ClaimText {
  const value = claims[name];
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return null;
}

/** Refuses a rule field that belongs to other providers: a tenant must not believe a pin holds that nothing checks. */
export function foreignFieldErrors(input: RuleInput, own: readonly (keyof RuleFields)[]): FieldError[] {
  const errors: FieldError[] = [];
  const provider = input.provider ?? 'github';
  for (const field of ALL_RULE_FIELDS) {
    if (own.includes(field)) continue;
    const value = input[field];
    if (value !== undefined && value !== null) errors.push({ pointer: `/${field}`, message: `not a field of ${provider} rules` });
  }
  return errors;
}

const ALL_RULE_FIELDS: readonly (keyof RuleFields)[] = [
  'subjectPattern',
  'workflowRef',
  'environment',
  'repositoryId',
  'repositoryOwnerId',
  'events',
  'namespaceId',
  'projectId',
  'configRef',
  'protectedRefOnly',
  'organizationSlug',
  'pipelineSlug',
  'branch',
  'contextIds',
  'vcsOrigin',
  'organizationId',
  'workspaceUuid',
  'repositoryUuid',
  'deploymentEnvironmentUuid',
];

/** The check that a token's audience is exactly ours (every provider but Bitbucket). */
export const exactAudience: TokenShape['audience'] = (aud, ours) => typeof aud === 'string' && aud === ours;
