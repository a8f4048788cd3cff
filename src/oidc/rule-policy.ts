/**
 * Which trust rules may exist (spec, Authentication rule 6) and which rules a verified token satisfies.
 * Pure functions, so every branch is covered by unit tests.
 */
import type { FieldError } from '../core/errors';
import { ACCESS_TOKEN_SCOPES, DEVICE_SCOPES, RULES_SCOPES, isScope, type Scope } from '../auth/scopes';
import { MAX_WILDCARDS, parsePattern, wildcardCount } from './subject';

export interface RuleInput {
  subjectPattern: string;
  workflowRef?: string | null;
  environment?: string | null;
  scopes: string[];
  repositoryId?: string | null;
  repositoryOwnerId?: string | null;
  events?: string[] | null;
  /** Builds registered through the rule are release builds (docs/contract.md, "Release builds"). */
  releaseBuilds?: boolean | null;
}

const OWNER = /^[A-Za-z0-9-]{1,39}$/;
const REPO = /^[A-Za-z0-9._*-]{1,100}$/;
const CONTEXT = /^(ref|environment):([^:\s]+)$/;
const REF_KINDS = ['refs/heads/', 'refs/tags/'];
const WORKFLOW_REF = /^[A-Za-z0-9-]{1,39}\/[A-Za-z0-9._-]{1,100}\/[^@\s*]+@[^\s*]+$/;
const NUMERIC_ID = /^[0-9]{1,20}$/;
const SHAPES = 'repo:<owner>/<repo>:ref:refs/heads/<branch>, repo:<owner>/<repo>:environment:<environment> or repo:<owner>/<repo>:ref:refs/tags/<prefix>*';

const EVENT_NAME = /^[a-z_]{1,64}$/;
/** GitHub event names whose jobs run code a pull request proposes: never exchanged, not even when listed. */
export const isPullRequestEvent = (event: string): boolean => event.startsWith('pull_request');

const onlyWildcards = (text: string) => /^\*+$/.test(text);

/** Whether the context part of a pattern narrows the jobs it admits (a branch, a tag prefix, an environment). */
function contextRestricts(kind: string, value: string): boolean {
  if (kind === 'environment') return !value.startsWith('*');
  const refKind = REF_KINDS.find((prefix) => value.startsWith(prefix));
  if (!refKind) return false;
  const name = value.slice(refKind.length);
  return name.length > 0 && !name.startsWith('*');
}

function patternErrors(input: Omit<RuleInput, 'scopes'>): FieldError[] {
  const at = (message: string): FieldError[] => [{ pointer: '/subjectPattern', message }];
  // The matcher is linear, and the count of `*` bounds its constant: a tenant cannot make matching expensive.
  if (wildcardCount(input.subjectPattern) > MAX_WILDCARDS) return at(`at most ${MAX_WILDCARDS} * per pattern`);
  const parsed = parsePattern(input.subjectPattern);
  if (!parsed) return at(`must have one of the shapes ${SHAPES}`);
  if (parsed.owner.includes('*')) return at('a wildcard repository owner is not allowed');
  if (!OWNER.test(parsed.owner)) return at('the repository owner is not a valid owner name');
  if (onlyWildcards(parsed.repo)) return at('a repository name that is only * is not allowed');
  if (!REPO.test(parsed.repo)) return at('the repository name is not valid');
  const hasOtherRestriction = Boolean(input.workflowRef || input.environment);
  if (onlyWildcards(parsed.context)) {
    return at('no real restriction: name a branch, a tag prefix or an environment, or set workflowRef or environment');
  }
  const context = CONTEXT.exec(parsed.context);
  if (!context) {
    if (parsed.context === 'pull_request') return at('tokens of pull-request events are never exchanged');
    return at(`must have one of the shapes ${SHAPES}`);
  }
  const [, kind, value] = context;
  if (kind === 'ref' && !onlyWildcards(value) && !REF_KINDS.some((prefix) => value.startsWith(prefix))) {
    return at('the ref must be refs/heads/<branch> or refs/tags/<tag>');
  }
  if (!contextRestricts(kind, value) && !hasOtherRestriction) {
    return at('no real restriction: name a branch, a tag prefix or an environment, or set workflowRef or environment');
  }
  return [];
}

/** Scopes a CI job may be given, alike for every provider. */
export function scopeErrors(scopes: string[]): FieldError[] {
  if (scopes.length === 0) return [{ pointer: '/scopes', message: 'at least one scope is required' }];
  const errors: FieldError[] = [];
  scopes.forEach((scope, i) => {
    const pointer = `/scopes/${i}`;
    if (!isScope(scope)) errors.push({ pointer, message: `unknown scope; allowed: ${ACCESS_TOKEN_SCOPES.join(', ')}` });
    else if (DEVICE_SCOPES.includes(scope)) errors.push({ pointer, message: 'device scopes are never given to CI jobs' });
    else if (RULES_SCOPES.includes(scope)) errors.push({ pointer, message: 'rules scopes are never given to CI jobs: a job cannot widen its own trust' });
  });
  return errors;
}

function eventErrors(events: string[] | null | undefined): FieldError[] {
  if (events == null) return [];
  if (events.length === 0) return [{ pointer: '/events', message: 'list at least one event, or leave events out' }];
  const errors: FieldError[] = [];
  events.forEach((event, i) => {
    const pointer = `/events/${i}`;
    if (!EVENT_NAME.test(event)) errors.push({ pointer, message: 'must be a GitHub event name, such as push, release or workflow_dispatch' });
    else if (isPullRequestEvent(event)) errors.push({ pointer, message: 'tokens of pull-request events are never exchanged' });
    else if (events.indexOf(event) !== i) errors.push({ pointer, message: 'listed twice' });
  });
  return errors;
}

/** Field errors of a GitHub rule that must not exist; empty when the rule may be created. */
export function ruleErrors(input: RuleInput): FieldError[] {
  const scopes = scopeErrors(input.scopes);
  const fields = gitHubFieldErrors(input);
  // The pattern's errors first, then the scopes', then the other fields' (the order callers have always seen).
  const patternOnes = fields.filter((error) => error.pointer === '/subjectPattern');
  return [...patternOnes, ...scopes, ...fields.filter((error) => error.pointer !== '/subjectPattern')];
}

/** The errors of a GitHub rule's own fields (its scopes aside). */
export function gitHubFieldErrors(input: Omit<RuleInput, 'scopes'>): FieldError[] {
  const errors = [...patternErrors(input), ...eventErrors(input.events)];
  if (input.workflowRef != null && !WORKFLOW_REF.test(input.workflowRef)) {
    errors.push({ pointer: '/workflowRef', message: 'must be <owner>/<repo>/<path>@<ref>, with no wildcard (it is compared exactly)' });
  }
  if (input.environment != null && (input.environment.trim() !== input.environment || input.environment === '' || input.environment.includes('*'))) {
    errors.push({ pointer: '/environment', message: 'must be an environment name (compared exactly; no wildcard, no surrounding spaces)' });
  }
  if (input.repositoryId != null && !NUMERIC_ID.test(input.repositoryId)) errors.push({ pointer: '/repositoryId', message: 'must be a numeric id' });
  if (input.repositoryOwnerId != null && !NUMERIC_ID.test(input.repositoryOwnerId)) {
    errors.push({ pointer: '/repositoryOwnerId', message: 'must be a numeric id' });
  }
  return errors;
}


