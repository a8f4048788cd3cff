// Protects: trust-rule creation refusals (spec Authentication rule 6: wildcard owner, `*` repository, no real
// restriction, device or rules scopes), `*` matching text without a colon, GitHub's immutable subject form, the
// subject belonging to the claimed repository, and every pinned claim (workflowRef, environment, repository ids).
import { ruleErrors, ruleMatches, grantedScopes, type RuleConditions, type TokenFacts } from '../../src/oidc/rule-policy';
import { patternMatches, resolveSubject, wildcardMatches } from '../../src/oidc/subject';

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

describe('resolveSubject', () => {
  const claims = (sub: string, extra: Partial<{ repository: string; repositoryId: string | null; repositoryOwnerId: string | null }> = {}) => ({
    sub,
    repository: REPO,
    repositoryId: '123',
    repositoryOwnerId: '42',
    ...extra,
  });

  it('accepts a named subject of the claimed repository', () => {
    expect(resolveSubject(claims('repo:acme/mobile-app:ref:refs/heads/main'))).toEqual({ owner: 'acme', repo: 'mobile-app', context: 'ref:refs/heads/main' });
    expect(resolveSubject(claims('repo:ACME/Mobile-App:environment:prod'))?.context).toBe('environment:prod');
  });

  it('refuses a subject of another repository, or a repository claim of the wrong shape', () => {
    expect(resolveSubject(claims('repo:acme/other:ref:refs/heads/main'))).toBeNull();
    expect(resolveSubject(claims('repo:evil/mobile-app:ref:refs/heads/main'))).toBeNull();
    expect(resolveSubject(claims('repo:acme/mobile-app-2:ref:refs/heads/main'))).toBeNull();
    expect(resolveSubject(claims('repo:acme/mobile-app'))).toBeNull();
    expect(resolveSubject(claims('repo:acme/mobile-app:ref:refs/heads/main', { repository: 'acme' }))).toBeNull();
    expect(resolveSubject(claims('repo:acme/mobile-app:ref:refs/heads/main', { repository: 'acme/mobile-app/x' }))).toBeNull();
  });

  it('accepts the immutable form only with ids equal to the id claims', () => {
    expect(resolveSubject(claims('repo:acme@42/mobile-app@123:ref:refs/heads/main'))).toEqual({ owner: 'acme', repo: 'mobile-app', context: 'ref:refs/heads/main' });
    expect(resolveSubject(claims('repo:acme@42/mobile-app@999:ref:refs/heads/main'))).toBeNull();
    expect(resolveSubject(claims('repo:acme@41/mobile-app@123:ref:refs/heads/main'))).toBeNull();
    expect(resolveSubject(claims('repo:acme@42/other@123:ref:refs/heads/main'))).toBeNull();
    expect(resolveSubject(claims('repo:acme@42/mobile-app@123:ref:refs/heads/main', { repositoryId: null }))).toBeNull();
  });
});

describe('ruleMatches', () => {
  const rule = (over: Partial<RuleConditions> = {}): RuleConditions => ({
    subjectPattern: 'repo:acme/mobile-app:ref:refs/heads/main',
    workflowRef: null,
    environment: null,
    repositoryId: null,
    repositoryOwnerId: null,
    ...over,
  });
  const facts = (over: Partial<TokenFacts> = {}): TokenFacts => ({
    subject: { owner: 'acme', repo: 'mobile-app', context: 'ref:refs/heads/main' },
    workflowRef: WORKFLOW,
    environment: null,
    repositoryId: '123',
    repositoryOwnerId: '42',
    ...over,
  });

  it('matches the subject pattern, owner and repository case-insensitively, the context exactly', () => {
    expect(ruleMatches(rule(), facts())).toBe(true);
    expect(ruleMatches(rule({ subjectPattern: 'repo:ACME/Mobile-App:ref:refs/heads/main' }), facts())).toBe(true);
    expect(ruleMatches(rule({ subjectPattern: 'repo:acme/mobile-app:ref:refs/heads/Main' }), facts())).toBe(false);
    expect(ruleMatches(rule(), facts({ subject: { owner: 'acme', repo: 'mobile-app', context: 'ref:refs/heads/dev' } }))).toBe(false);
    expect(ruleMatches(rule({ subjectPattern: 'repo:acme/mobile-*:ref:refs/heads/main' }), facts())).toBe(true);
    expect(ruleMatches(rule({ subjectPattern: 'repo:acme/mobile-app:ref:refs/tags/v*' }), facts({ subject: { owner: 'acme', repo: 'mobile-app', context: 'ref:refs/tags/v1.2' } }))).toBe(true);
    expect(ruleMatches(rule({ subjectPattern: 'not a pattern' }), facts())).toBe(false);
  });

  it('requires each pinned claim to be equal', () => {
    expect(ruleMatches(rule({ workflowRef: WORKFLOW }), facts())).toBe(true);
    expect(ruleMatches(rule({ workflowRef: WORKFLOW }), facts({ workflowRef: 'acme/mobile-app/.github/workflows/other.yml@refs/heads/main' }))).toBe(false);
    expect(ruleMatches(rule({ workflowRef: WORKFLOW }), facts({ workflowRef: null }))).toBe(false);
    expect(ruleMatches(rule({ environment: 'prod' }), facts({ environment: 'prod' }))).toBe(true);
    expect(ruleMatches(rule({ environment: 'prod' }), facts({ environment: 'production' }))).toBe(false);
    expect(ruleMatches(rule({ environment: 'prod' }), facts())).toBe(false);
    expect(ruleMatches(rule({ repositoryId: '123' }), facts())).toBe(true);
    expect(ruleMatches(rule({ repositoryId: '124' }), facts())).toBe(false);
    expect(ruleMatches(rule({ repositoryOwnerId: '42' }), facts())).toBe(true);
    expect(ruleMatches(rule({ repositoryOwnerId: '43' }), facts())).toBe(false);
  });

  it('patternMatches ignores an unparseable pattern', () => {
    expect(patternMatches('repo:acme', { owner: 'acme', repo: 'x', context: 'y' })).toBe(false);
  });
});
