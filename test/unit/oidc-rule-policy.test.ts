// Protects: trust-rule creation refusals (spec Authentication rule 6: wildcard owner, `*` repository, no real
// restriction, device or rules scopes; at most 8 `*`; events without pull-request events), `*` matching text without
// a colon, subjects in every form GitHub issues (named, immutable, customised) explained by the token's own claims,
// and the evaluator: rules matched on the verified claims, each pinned claim, the events allowlist and workflow_run,
// and the first failing check of every rule with what it expected and what the token said.
import { grantedScopes } from '../../src/auth/scopes';
import { ruleErrors } from '../../src/oidc/rule-policy';
import { evaluateRules as evaluateProviderRules } from '../../src/oidc/providers/evaluate';
import { GITHUB } from '../../src/oidc/providers/github';
import type { RuleConditions } from '../../src/oidc/providers/model';

const ISSUER = 'https://token.actions.githubusercontent.com';
const evaluateRules = (rules: RuleConditions[], payload: Record<string, unknown>) => evaluateProviderRules(GITHUB, ISSUER, ISSUER, rules, payload);
import { subjectProblem, wildcardMatches } from '../../src/oidc/subject';

const REPO = 'acme/mobile-app';
const WORKFLOW = 'acme/mobile-app/.github/workflows/release.yml@refs/heads/main';

const errorsFor = (subjectPattern: string, extra: Partial<Parameters<typeof ruleErrors>[0]> = {}) =>
  ruleErrors({ subjectPattern, scopes: ['builds:write'], ...extra });

describe('ruleErrors', () => {
  it.each([
    'repo:acme/mobile-app:ref:refs/heads/main',
    'repo:acme/mobile-app:environment:production',
    'repo:acme/mobile-app:ref:refs/tags/v*',
    'repo:acme/mobile-app:ref:refs/heads/release-*',
    'repo:acme/mobile-*:ref:refs/heads/main',
    'repo:Acme-Org/mobile.app_2:ref:refs/heads/main',
  ])('accepts %s', (pattern) => {
    expect(errorsFor(pattern)).toEqual([]);
  });

  it.each([
    ['repo:*/mobile-app:ref:refs/heads/main', 'wildcard repository owner'],
    ['repo:ac*/mobile-app:ref:refs/heads/main', 'wildcard repository owner'],
    ['repo:acme/*:ref:refs/heads/main', 'only *'],
    ['repo:acme/**:ref:refs/heads/main', 'only *'],
    ['repo:acme/mobile-app:*', 'no real restriction'],
    ['repo:acme/mobile-app:ref:*', 'no real restriction'],
    ['repo:acme/mobile-app:ref:refs/heads/*', 'no real restriction'],
    ['repo:acme/mobile-app:ref:refs/tags/*', 'no real restriction'],
    ['repo:acme/mobile-app:ref:refs/heads/', 'no real restriction'],
    ['repo:acme/mobile-app:environment:*', 'no real restriction'],
    ['repo:acme/mobile-app:pull_request', 'pull-request'],
    ['repo:acme/mobile-app:ref:refs/heads/r*l*e*a*s*e*-*x*y*', 'at most 8 *'],
    ['repo:acme/mobile-app:ref:refs/pull/1/merge', 'refs/heads/<branch> or refs/tags/<tag>'],
    ['repo:acme/mobile-app:job_workflow_ref:x', 'shapes'],
    ['repo:acme/mobile-app', 'shapes'],
    ['acme/mobile-app:ref:refs/heads/main', 'shapes'],
    ['repo:acme/mobile-app:ref:refs/heads/main branch', 'shapes'],
    ['repo:ac me/mobile-app:ref:refs/heads/main', 'owner'],
    ['repo:acme/mobile app:ref:refs/heads/main', 'repository name'],
  ])('refuses %s (%s)', (pattern, message) => {
    const errors = errorsFor(pattern);
    expect(errors).toHaveLength(1);
    expect(errors[0].pointer).toBe('/subjectPattern');
    expect(errors[0].message).toContain(message);
  });

  it('accepts a wildcard context only with workflowRef or environment', () => {
    for (const pattern of ['repo:acme/mobile-app:ref:refs/heads/*', 'repo:acme/mobile-app:ref:*', 'repo:acme/mobile-app:environment:*']) {
      expect(errorsFor(pattern)).not.toEqual([]);
      expect(errorsFor(pattern, { workflowRef: WORKFLOW })).toEqual([]);
      expect(errorsFor(pattern, { environment: 'production' })).toEqual([]);
    }
    // The other restrictions never excuse a wildcard owner or repository.
    expect(errorsFor('repo:*/mobile-app:ref:refs/heads/main', { workflowRef: WORKFLOW })).not.toEqual([]);
    expect(errorsFor('repo:acme/*:ref:refs/heads/main', { environment: 'production' })).not.toEqual([]);
  });

  it('refuses device, rules and unknown scopes, and an empty list, each at its index', () => {
    expect(ruleErrors({ subjectPattern: 'repo:acme/mobile-app:ref:refs/heads/main', scopes: [] })).toEqual([{ pointer: '/scopes', message: expect.any(String) }]);
    const errors = ruleErrors({
      subjectPattern: 'repo:acme/mobile-app:ref:refs/heads/main',
      scopes: ['builds:read', 'attest:verify', 'events:ingest', 'rules:write', 'rules:read', 'admin'],
    });
    expect(errors.map((e) => e.pointer)).toEqual(['/scopes/1', '/scopes/2', '/scopes/3', '/scopes/4', '/scopes/5']);
    expect(errors[0].message).toContain('device');
    expect(errors[2].message).toContain('rules');
    expect(errors[4].message).toContain('unknown');
  });

  it('checks workflowRef, environment and the pinned ids', () => {
    const p = 'repo:acme/mobile-app:ref:refs/heads/main';
    expect(errorsFor(p, { workflowRef: WORKFLOW, environment: 'prod', repositoryId: '1', repositoryOwnerId: '2' })).toEqual([]);
    expect(errorsFor(p, { workflowRef: 'acme/mobile-app/.github/workflows/*.yml@refs/heads/main' })[0].pointer).toBe('/workflowRef');
    expect(errorsFor(p, { workflowRef: 'release.yml' })[0].pointer).toBe('/workflowRef');
    expect(errorsFor(p, { environment: '*' })[0].pointer).toBe('/environment');
    expect(errorsFor(p, { environment: ' prod' })[0].pointer).toBe('/environment');
    expect(errorsFor(p, { repositoryId: 'abc' })[0].pointer).toBe('/repositoryId');
    expect(errorsFor(p, { repositoryOwnerId: '12a' })[0].pointer).toBe('/repositoryOwnerId');
  });

  it('accepts 8 * and refuses 9', () => {
    expect(errorsFor('repo:acme/mobile-app:ref:refs/heads/r*l*e*a*s*e*-*x*')).toEqual([]);
    expect(errorsFor('repo:acme/mobile-app:ref:refs/heads/r*l*e*a*s*e*-*x*y*')[0].message).toContain('at most 8 *');
  });

  it('checks the events allowlist: event names, never a pull-request event, no duplicates', () => {
    const p = 'repo:acme/mobile-app:ref:refs/heads/main';
    expect(errorsFor(p, { events: ['push', 'release', 'workflow_dispatch', 'workflow_run'] })).toEqual([]);
    expect(errorsFor(p, { events: null })).toEqual([]);
    for (const event of ['pull_request', 'pull_request_target', 'pull_request_review']) {
      expect(errorsFor(p, { events: ['push', event] })).toEqual([{ pointer: '/events/1', message: expect.stringContaining('pull-request') }]);
    }
    expect(errorsFor(p, { events: [] })[0].pointer).toBe('/events');
    expect(errorsFor(p, { events: ['Push'] })[0].pointer).toBe('/events/0');
    expect(errorsFor(p, { events: ['push', 'push'] })).toEqual([{ pointer: '/events/1', message: 'listed twice' }]);
  });

  it('grants only CI scopes, deduplicated in canonical order', () => {
    expect(grantedScopes(['threats:read', 'builds:write', 'threats:read', 'rules:write', 'attest:verify'])).toEqual(['builds:write', 'threats:read']);
  });
});

describe('wildcardMatches', () => {
  it('lets * match text without a colon only, everything else literally', () => {
    expect(wildcardMatches('refs/heads/*', 'refs/heads/main', { ignoreCase: false })).toBe(true);
    expect(wildcardMatches('refs/heads/*', 'refs/heads/a/b', { ignoreCase: false })).toBe(true);
    expect(wildcardMatches('refs/heads/*', 'refs/heads/x:y', { ignoreCase: false })).toBe(false);
    expect(wildcardMatches('v1.*', 'v1x2', { ignoreCase: false })).toBe(false); // the dot is literal
    expect(wildcardMatches('Main', 'main', { ignoreCase: false })).toBe(false);
    expect(wildcardMatches('Main', 'main', { ignoreCase: true })).toBe(true);
    expect(wildcardMatches('a(b', 'a(b', { ignoreCase: false })).toBe(true);
  });
});

describe('subjectProblem', () => {
  const claims = {
    sub: '',
    repository: REPO,
    repository_id: '123',
    repository_owner_id: '42',
    ref: 'refs/heads/main',
    environment: 'prod',
    event_name: 'push',
    job_workflow_ref: WORKFLOW,
    runner_environment: 'github-hosted',
  };

  it.each([
    'repo:acme/mobile-app:ref:refs/heads/main',
    'repo:acme/mobile-app:environment:prod',
    'repo:acme@42/mobile-app@123:environment:prod',
    `repo:acme/mobile-app:environment:prod:job_workflow_ref:${WORKFLOW}`,
    'repository_owner_id:42:repository_id:123:environment:prod',
    'repository_owner_id:42:repository_id:123:ref:refs/heads/main:runner_environment:github-hosted',
  ])('accepts %s: every part is a claim of the token', (sub) => {
    expect(subjectProblem(sub, claims)).toBeNull();
  });

  it.each([
    ['repo:acme/other:ref:refs/heads/main', 'subject_mismatch'],
    ['repo:evil/mobile-app:ref:refs/heads/main', 'subject_mismatch'],
    ['repo:acme@42/mobile-app@999:ref:refs/heads/main', 'subject_mismatch'],
    ['repo:acme@41/mobile-app@123:ref:refs/heads/main', 'subject_mismatch'],
    ['repo:acme/mobile-app:ref:refs/heads/dev', 'subject_mismatch'],
    ['repository_owner_id:41:repository_id:123:environment:prod', 'subject_unrecognized'],
    ['repository_id:123:colour:blue', 'subject_unrecognized'],
    ['repo:acme/mobile-app:pull_request', 'pull_request'],
    ['', 'subject_unrecognized'],
    ['r'.repeat(3000), 'subject_unrecognized'],
  ])('refuses %s (%s)', (sub, problem) => {
    expect(subjectProblem(sub, claims)).toBe(problem);
  });
});

describe('evaluateRules', () => {
  let n = 0;
  const rule = (over: Partial<RuleConditions> = {}): RuleConditions => ({
    _id: `rul_${++n}`,
    subjectPattern: 'repo:acme/mobile-app:ref:refs/heads/main',
    workflowRef: null,
    environment: null,
    repositoryId: null,
    repositoryOwnerId: null,
    events: null,
    scopes: ['builds:write'],
    ...over,
  });
  const payload = (over: Record<string, unknown> = {}) => ({
    sub: 'repo:acme/mobile-app:ref:refs/heads/main',
    repository: REPO,
    repository_id: '123',
    repository_owner_id: '42',
    ref: 'refs/heads/main',
    event_name: 'push',
    job_workflow_ref: WORKFLOW,
    ...over,
  });
  const failed = (r: RuleConditions, p = payload()) => evaluateRules([r], p).rules[0].failed;

  it('matches owner and repository case-insensitively from the repository claim, the ref exactly, with *', () => {
    expect(failed(rule())).toBeNull();
    expect(failed(rule({ subjectPattern: 'repo:ACME/Mobile-App:ref:refs/heads/main' }))).toBeNull();
    expect(failed(rule({ subjectPattern: 'repo:acme/mobile-*:ref:refs/heads/main' }))).toBeNull();
    expect(failed(rule({ subjectPattern: 'repo:acme/mobile-app:ref:refs/heads/Main' }))).toEqual({ check: 'subjectPattern.ref', expected: 'refs/heads/Main', actual: 'refs/heads/main' });
    expect(failed(rule({ subjectPattern: 'repo:acme/other:ref:refs/heads/main' }))).toEqual({ check: 'subjectPattern.repository', expected: 'acme/other', actual: REPO });
    const tag = payload({ sub: 'repo:acme/mobile-app:ref:refs/tags/v1.2', ref: 'refs/tags/v1.2' });
    expect(failed(rule({ subjectPattern: 'repo:acme/mobile-app:ref:refs/tags/v*' }), tag)).toBeNull();
    expect(failed(rule({ subjectPattern: 'not a pattern' }))).toMatchObject({ check: 'subjectPattern' });
  });

  it('matches subjects in the immutable and customised forms on the same claims as the named form', () => {
    for (const sub of ['repo:acme@42/mobile-app@123:ref:refs/heads/main', `repo:acme/mobile-app:ref:refs/heads/main:job_workflow_ref:${WORKFLOW}`, 'repository_owner_id:42:repository_id:123:ref:refs/heads/main']) {
      const evaluation = evaluateRules([rule({ repositoryId: '123', repositoryOwnerId: '42' })], payload({ sub }));
      expect({ sub, refusal: evaluation.refusal, matches: evaluation.matches }).toEqual({ sub, refusal: null, matches: true });
    }
  });

  it('matches an environment pattern on the environment claim', () => {
    const env = payload({ sub: 'repo:acme/mobile-app:environment:prod', environment: 'prod' });
    expect(failed(rule({ subjectPattern: 'repo:acme/mobile-app:environment:prod' }), env)).toBeNull();
    expect(failed(rule({ subjectPattern: 'repo:acme/mobile-app:environment:staging' }), env)).toEqual({ check: 'subjectPattern.environment', expected: 'staging', actual: 'prod' });
    expect(failed(rule({ subjectPattern: 'repo:acme/mobile-app:environment:prod' }))).toEqual({ check: 'subjectPattern.environment', expected: 'prod', actual: null });
  });

  it('requires each pinned claim to be equal, reporting the first that is not', () => {
    const other = 'acme/mobile-app/.github/workflows/other.yml@refs/heads/main';
    expect(failed(rule({ workflowRef: WORKFLOW }))).toBeNull();
    expect(failed(rule({ workflowRef: WORKFLOW }), payload({ job_workflow_ref: other }))).toEqual({ check: 'workflowRef', expected: WORKFLOW, actual: other });
    expect(failed(rule({ workflowRef: WORKFLOW }), payload({ job_workflow_ref: undefined }))).toEqual({ check: 'workflowRef', expected: WORKFLOW, actual: null });
    expect(failed(rule({ environment: 'prod' }), payload({ environment: 'production' }))).toEqual({ check: 'environment', expected: 'prod', actual: 'production' });
    expect(failed(rule({ repositoryId: '124' }))).toEqual({ check: 'repositoryId', expected: '124', actual: '123' });
    expect(failed(rule({ repositoryOwnerId: '43' }))).toEqual({ check: 'repositoryOwnerId', expected: '43', actual: '42' });
    expect(failed(rule({ repositoryId: '123', repositoryOwnerId: '42' }))).toBeNull();
    // The first failing check is the one reported.
    expect(failed(rule({ workflowRef: WORKFLOW, repositoryId: '1' }), payload({ job_workflow_ref: other }))?.check).toBe('workflowRef');
  });

  it('applies the events allowlist, and refuses workflow_run unless a rule lists it', () => {
    expect(failed(rule({ events: ['push', 'release'] }))).toBeNull();
    expect(failed(rule({ events: ['release'] }))).toEqual({ check: 'events', expected: 'release', actual: 'push' });
    expect(failed(rule({ events: ['release'] }), payload({ event_name: undefined }))).toEqual({ check: 'events', expected: 'release', actual: null });
    const run = payload({ event_name: 'workflow_run' });
    expect(failed(rule(), run)).toMatchObject({ check: 'events', actual: 'workflow_run' });
    expect(failed(rule({ events: ['workflow_run'] }), run)).toBeNull();
  });

  it('gives the union of the matching rules\' scopes, and nothing when the token itself is refused', () => {
    const rules = [rule({ scopes: ['builds:read'] }), rule({ scopes: ['builds:write', 'builds:read'] }), rule({ subjectPattern: 'repo:acme/mobile-app:ref:refs/heads/dev', scopes: ['threats:read'] })];
    const evaluation = evaluateRules(rules, payload());
    expect(evaluation).toMatchObject({ matches: true, scopes: ['builds:write', 'builds:read'], refusal: null });
    expect(evaluation.rules.map((r) => r.matched)).toEqual([true, true, false]);
    expect(evaluation.matched).toEqual([rules[0], rules[1]]);
    for (const [over, refusal] of [
      [{ event_name: 'pull_request' }, 'pull_request'],
      [{ event_name: 'pull_request_target' }, 'pull_request'],
      [{ sub: 'repo:evil/mobile-app:ref:refs/heads/main' }, 'subject_mismatch'],
      [{ repository: undefined }, 'missing_claim'],
    ] as const) {
      const refused = evaluateRules(rules, payload(over));
      expect({ over, matches: refused.matches, scopes: refused.scopes, refusal: refused.refusal }).toEqual({ over, matches: false, scopes: [], refusal });
    }
  });
});
