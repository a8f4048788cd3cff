// Fuzz target of the CI providers' models (src/oidc/providers): untrusted bytes as the claims of a verified token,
// or of a dry-run (where every value is text a caller chose), and as a rule a tenant asks to create. Every provider's
// model judges them through the one evaluator against rules of every provider; nothing may throw, a refusal is a
// known reason, provenance stays bounded text, and a rule's errors point at its own fields. The target throws only
// when the models do, which the harness reports as a crash (a hang past its time bound is one too).
import { evaluateRules } from '../../src/oidc/providers/evaluate';
import { providerModel } from '../../src/oidc/providers/registry';
import { PROVIDERS, type RuleConditions } from '../../src/oidc/providers/model';
import { REFUSAL_REASONS } from '../../src/oidc/refusal';
import { gitlabClaims } from '../fixtures/oidc/gitlab';
import { buildkiteClaims } from '../fixtures/oidc/buildkite';
import { circleciClaims, CIRCLECI_ORG_ID, CIRCLECI_PROJECT_ID } from '../fixtures/oidc/circleci';
import { bitbucketClaims, BITBUCKET_REPOSITORY_UUID, BITBUCKET_WORKSPACE_UUID } from '../fixtures/oidc/bitbucket';

const NOW = new Date('2026-01-15T12:00:00Z');
const GITHUB = 'https://token.actions.githubusercontent.com';
const ISSUERS = {
  github: GITHUB,
  gitlab: 'https://gitlab.com',
  buildkite: 'https://agent.buildkite.com',
  circleci: `https://oidc.circleci.com/org/${CIRCLECI_ORG_ID}`,
  bitbucket: 'https://api.bitbucket.org/2.0/workspaces/acme/pipelines-config/identity/oidc',
} as const;

/** One rule of each provider, each with every check it has set, wildcards included. */
const RULES: RuleConditions[] = [
  { _id: 'rul_gh', scopes: ['builds:write'], subjectPattern: 'repo:acme/mobile-*:ref:refs/heads/release-*', workflowRef: 'acme/mobile-app/.github/workflows/r.yml@refs/heads/main', environment: 'prod', repositoryId: '1', repositoryOwnerId: '2', events: ['push'] },
  { _id: 'rul_gl', provider: 'gitlab', issuer: ISSUERS.gitlab, scopes: ['builds:write'], subjectPattern: 'project_path:acme/*-app:ref_type:branch:ref:rel*/*', namespaceId: '72', projectId: '20', configRef: 'gitlab.com/acme/app//.gitlab-ci.yml@refs/heads/main', environment: 'prod', protectedRefOnly: true },
  { _id: 'rul_bk', provider: 'buildkite', issuer: ISSUERS.buildkite, scopes: ['builds:write'], organizationSlug: 'acme', organizationId: 'o', pipelineSlug: 'mobile-*', branch: 'ma*n' },
  { _id: 'rul_cc', provider: 'circleci', issuer: ISSUERS.circleci, scopes: ['builds:write'], projectId: CIRCLECI_PROJECT_ID, contextIds: [CIRCLECI_PROJECT_ID], vcsOrigin: 'github.com/acme/mobile-app', branch: '*a*' },
  { _id: 'rul_bb', provider: 'bitbucket', issuer: ISSUERS.bitbucket, scopes: ['builds:write'], workspaceUuid: BITBUCKET_WORKSPACE_UUID, repositoryUuid: BITBUCKET_REPOSITORY_UUID, branch: 'm*', deploymentEnvironmentUuid: BITBUCKET_REPOSITORY_UUID },
];

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The same claims as a dry-run hands them over: every value as text (non-strings as their JSON). */
const asPasted = (claims: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(claims).filter(([, v]) => v !== null).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));

function judgeAll(claims: Record<string, unknown>): void {
  for (const provider of PROVIDERS) {
    const model = providerModel(provider);
    const evaluation = evaluateRules(model, ISSUERS[provider], GITHUB, RULES, claims);
    if (evaluation.refusal !== null && !(REFUSAL_REASONS as readonly string[]).includes(evaluation.refusal)) throw new Error(`${provider}: unknown refusal ${evaluation.refusal}`);
    if (evaluation.rules.length !== RULES.length) throw new Error(`${provider}: an outcome per rule`);
    for (const [name, value] of Object.entries(model.provenance(claims))) {
      if (value !== null && value !== undefined && (typeof value !== 'string' || value.length > 520)) throw new Error(`${provider}: provenance ${name} is not bounded text`);
    }
    for (const value of Object.values(model.ruleClaims(claims))) if (value !== null && typeof value !== 'string') throw new Error(`${provider}: a rule claim that is not text`);
    model.pinsOf(RULES[0], claims);
  }
}

export function fuzzOidcClaims(input: Buffer): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(input.toString('utf8'));
  } catch {
    return; // no claims to judge: the verifier refused the token before any model saw it
  }
  if (!isRecord(parsed)) return;
  judgeAll(parsed);
  judgeAll(asPasted(parsed));
  // The same object as a rule a tenant asks to create, as every provider's.
  for (const provider of PROVIDERS) {
    const errors = providerModel(provider).ruleErrors({ ...(parsed as object), provider, scopes: ['builds:write'] } as never);
    for (const error of errors) if (typeof error.pointer !== 'string' || !error.pointer.startsWith('/')) throw new Error(`${provider}: a rule error without a pointer`);
  }
}

/** Each provider's documented token claims, and one rule of each, as JSON. */
export function oidcClaimsSeeds(): Buffer[] {
  const base = (issuer: string) => ({ issuer, audience: 'https://api.example.com', now: NOW });
  const claims = [
    gitlabClaims(base(ISSUERS.gitlab)),
    buildkiteClaims(base(ISSUERS.buildkite)),
    circleciClaims(base(ISSUERS.circleci)),
    bitbucketClaims(base(ISSUERS.bitbucket)),
    { sub: 'repo:acme/mobile-app:ref:refs/heads/main', repository: 'acme/mobile-app', repository_id: '1', repository_owner_id: '2', ref: 'refs/heads/main', event_name: 'push', job_workflow_ref: 'acme/mobile-app/.github/workflows/r.yml@refs/heads/main', iss: GITHUB },
  ];
  return [...claims, ...RULES].map((value) => Buffer.from(JSON.stringify(value)));
}
