// Trust-rule matching bench: the worst case a tenant can write. A 2,000-character colon-free subject part (all `a`)
// against patterns of 8 `*` (the most a rule may hold) that cannot match, because they end with a character the text
// does not have, so every placement of every `*` is in play for a backtracking matcher. Prints microseconds per
// check for the linear matcher the service uses (src/oidc/subject.ts), and the whole evaluator on a token whose
// ref is that text against 20 such rules (the most an app may hold). For comparison, the regular expression the
// service used before (a `[^:]*` per `*`) is timed once on a 100-character text with 1 to 4 stars: its time grows
// with the text length to the power of the stars, and with 8 stars on 2,000 characters it would not finish.
// Target: the linear matcher's worst case stays under 1 ms per check, so 20 rules cost well under the exchange's
// own signature check. Then every CI provider's worst case through the same evaluator, and the exchange end to end:
// the p99 of 20 rules across four providers against 20 GitHub rules (target: within 1.2x). BENCH_ONLY=matching
// skips the exchange (it starts a FerretDB, or uses MONGODB_URI).
// Run: npm run bench:rules
import { performance } from 'node:perf_hooks';
import { randomBytes, randomInt } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { benchMongo, percentile, startInProcessService } from './support';
import { systemClock } from '../src/core/clock';
import { createApp } from '../src/services/apps-service';
import { createOidcRule } from '../src/services/oidc-rules-service';
import { operatorContext } from '../src/services/operator-context';
import { GITLAB } from '../src/oidc/providers/gitlab';
import { BUILDKITE } from '../src/oidc/providers/buildkite';
import { CIRCLECI } from '../src/oidc/providers/circleci';
import { BITBUCKET } from '../src/oidc/providers/bitbucket';
import type { ProviderModel } from '../src/oidc/providers/model';
import { startOidcIssuer } from '../test/support/oidc-issuer';
import { gitlabClaims, GITLAB_HEADER } from '../test/fixtures/oidc/gitlab';
import { buildkiteClaims, BUILDKITE_HEADER } from '../test/fixtures/oidc/buildkite';
import { circleciClaims, CIRCLECI_HEADER } from '../test/fixtures/oidc/circleci';
import { bitbucketClaims, bitbucketWorkspaceAudience, BITBUCKET_HEADER } from '../test/fixtures/oidc/bitbucket';
import { wildcardMatches } from '../src/oidc/subject';
import { evaluateRules } from '../src/oidc/providers/evaluate';
import { GITHUB } from '../src/oidc/providers/github';
import type { RuleConditions } from '../src/oidc/providers/model';

const TEXT_LENGTH = 2000;
const text = 'a'.repeat(TEXT_LENGTH);
const stars = (n: number, tail = 'b') => `${'a*'.repeat(n)}${tail}`;

function microsPerCall(fn: () => boolean, minMs = 300): number {
  for (let i = 0; i < 50; i++) fn(); // warm up the JIT
  let calls = 0;
  const start = performance.now();
  while (performance.now() - start < minMs) {
    if (fn()) throw new Error('the pattern matched: the bench measures non-matching patterns');
    calls++;
  }
  return ((performance.now() - start) * 1000) / calls;
}

const regexMatches = (pattern: string, value: string) => {
  const source = pattern
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^:]*');
  return new RegExp(`^${source}$`, 's').test(value);
};

const fmt = (us: number) => us.toFixed(1).padStart(10);
const TARGET_US = 1000;
console.log(`subject part: ${TEXT_LENGTH} characters; patterns that cannot match`);
console.log('pattern                          linear (us/check)');
let worst = 0;
for (const pattern of [stars(8), `*${'a*'.repeat(7)}b`, `${'*a'.repeat(8)}b`, `b${'*'.repeat(8)}`, `${'*'.repeat(8)}b`]) {
  const label = pattern.length > 30 ? `${pattern.slice(0, 27)}...` : pattern;
  const us = microsPerCall(() => wildcardMatches(pattern, text, { ignoreCase: false }));
  worst = Math.max(worst, us);
  console.log(`${label.padEnd(32)} ${fmt(us)}`);
}
console.log(`worst case ${worst.toFixed(1)} us per check; target < ${TARGET_US} us: ${worst < TARGET_US ? 'met' : 'NOT met'}`);

const rules: RuleConditions[] = Array.from({ length: 20 }, (_, i) => ({
  _id: `rul_${i}`,
  subjectPattern: `repo:acme/mobile-app:ref:refs/heads/${stars(8, `b${i}`)}`.replace('a*', 'x'),
  workflowRef: null,
  environment: null,
  repositoryId: null,
  repositoryOwnerId: null,
  events: null,
  scopes: ['builds:write'],
}));
// Only the last segment varies, so each rule reaches the ref check with its 8 stars.
for (const rule of rules) rule.subjectPattern = rule.subjectPattern!.replace('refs/heads/x', 'refs/heads/a');
const ref = `refs/heads/${text}`;
const payload = { sub: `repo:acme/mobile-app:ref:${ref}`, repository: 'acme/mobile-app', ref, event_name: 'push' };
const ISSUER = 'https://token.actions.githubusercontent.com';
const evaluation = evaluateRules(GITHUB, ISSUER, ISSUER, rules, payload);
if (evaluation.matches || evaluation.rules.some((r) => r.failed?.check !== 'subjectPattern.ref')) throw new Error('the bench rules must fail on the ref');
console.log(`\nevaluator, 20 rules of 8 * against a ${ref.length}-character ref: ${fmt(microsPerCall(() => evaluateRules(GITHUB, ISSUER, ISSUER, rules, payload).matches))} us/token`);

// The former matcher grows with the text length to the power of the stars: shown on a 100-character text.
const short = 'a'.repeat(100);
console.log(`\nthe former backtracking regular expression on ${short.length} characters (at 8 stars and 2,000 it would not finish):`);
for (const n of [1, 2, 3, 4]) {
  const pattern = stars(n);
  const start = performance.now();
  regexMatches(pattern, short);
  const regexUs = (performance.now() - start) * 1000;
  console.log(`${pattern.padEnd(32)} regex ${fmt(regexUs)} us   linear ${fmt(microsPerCall(() => wildcardMatches(pattern, short, { ignoreCase: false }), 50))} us`);
}

// ---- Every provider's worst case: 20 rules of one provider, each failing at its costliest check (8-`*` patterns
// against 2,000-character claims, 16 CircleCI contexts against a token listing 200), through the one evaluator.
const GITLAB_ISS = 'https://gitlab.com';
const CIRCLE_ISS = 'https://oidc.circleci.com/org/5f6a1d7e-3c2b-4a8e-9f10-2b3c4d5e6f70';
const BITBUCKET_ISS = 'https://api.bitbucket.org/2.0/workspaces/acme/pipelines-config/identity/oidc';
const uuid = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
const twenty = (provider: RuleConditions['provider'], issuer: string, fields: (i: number) => Partial<RuleConditions>): RuleConditions[] =>
  Array.from({ length: 20 }, (_, i) => ({ _id: `rul_${provider}_${i}`, provider, issuer, scopes: ['builds:write'], ...fields(i) }));
const base = (issuer: string) => ({ issuer, audience: 'https://api.example.com', now: new Date() });
const longName = `a${text}`;
const worstCases: Array<[string, ProviderModel, string, RuleConditions[], Record<string, unknown>]> = [
  ['gitlab (project path)', GITLAB, GITLAB_ISS, twenty('gitlab', GITLAB_ISS, (i) => ({ subjectPattern: `project_path:acme/${stars(8, `b${i}`)}:ref_type:branch:ref:main` })), gitlabClaims(base(GITLAB_ISS), { project_path: `acme/${longName}` })],
  ['gitlab (ref)', GITLAB, GITLAB_ISS, twenty('gitlab', GITLAB_ISS, (i) => ({ subjectPattern: `project_path:acme/app:ref_type:branch:ref:${stars(8, `b${i}`)}` })), gitlabClaims(base(GITLAB_ISS), { project_path: 'acme/app', ref: longName })],
  ['buildkite (pipeline)', BUILDKITE, 'https://agent.buildkite.com', twenty('buildkite', 'https://agent.buildkite.com', (i) => ({ organizationSlug: 'acme', pipelineSlug: stars(8, `b${i}`) })), buildkiteClaims(base('https://agent.buildkite.com'), { pipeline_slug: longName })],
  ['buildkite (branch)', BUILDKITE, 'https://agent.buildkite.com', twenty('buildkite', 'https://agent.buildkite.com', (i) => ({ organizationSlug: 'acme', pipelineSlug: 'mobile-app', branch: stars(8, `b${i}`) })), buildkiteClaims(base('https://agent.buildkite.com'), { build_branch: longName })],
  ['circleci (contexts)', CIRCLECI, CIRCLE_ISS, twenty('circleci', CIRCLE_ISS, () => ({ projectId: 'a1b2c3d4-e5f6-4789-8abc-def012345678', contextIds: Array.from({ length: 16 }, (_, j) => uuid(1000 + j)) })), circleciClaims(base(CIRCLE_ISS), { 'oidc.circleci.com/context-ids': Array.from({ length: 200 }, (_, j) => uuid(j)) })],
  ['circleci (branch)', CIRCLECI, CIRCLE_ISS, twenty('circleci', CIRCLE_ISS, (i) => ({ projectId: 'a1b2c3d4-e5f6-4789-8abc-def012345678', branch: stars(8, `b${i}`) })), circleciClaims(base(CIRCLE_ISS), { 'oidc.circleci.com/vcs-ref': `refs/heads/${longName}` })],
  ['bitbucket (branch)', BITBUCKET, BITBUCKET_ISS, twenty('bitbucket', BITBUCKET_ISS, (i) => ({ workspaceUuid: '{922e118c-f34f-4226-a897-0e0afbec553d}', repositoryUuid: '{1de489be-ce6a-42a0-a8c8-eadbf1174ac7}', branch: stars(8, `b${i}`) })), bitbucketClaims(base(BITBUCKET_ISS), { branchName: longName })],
];
console.log('\nevery provider, 20 rules failing at their costliest check:');
console.log('provider (check)               us/check   us/token (20 rules)');
let worstProvider = 0;
for (const [label, model, issuer, providerRules, claims] of worstCases) {
  const evaluated = evaluateRules(model, issuer, ISSUER, providerRules, claims);
  if (evaluated.matches || evaluated.rules.some((r) => r.failed === null || r.failed.check === 'issuer')) throw new Error(`${label}: every rule must fail on its own check`);
  const perToken = microsPerCall(() => evaluateRules(model, issuer, ISSUER, providerRules, claims).matches);
  worstProvider = Math.max(worstProvider, perToken / providerRules.length);
  console.log(`${label.padEnd(30)} ${fmt(perToken / providerRules.length)} ${fmt(perToken)}`);
}
console.log(`worst case of any provider ${worstProvider.toFixed(1)} us per check; target < ${TARGET_US} us: ${worstProvider < TARGET_US ? 'met' : 'NOT met'}`);

/**
 * The exchange end to end (POST /v1/auth/oidc on the service in this process, FerretDB or MONGODB_URI): p99 of 20
 * GitHub rules against 20 rules across GitLab, Buildkite, CircleCI and Bitbucket (5 each; each token matches its
 * provider's last rule), tokens really signed by loopback issuers (one per provider, at a path of its own), four
 * exchanges at a time, the two apps in alternating rounds. Target: the mixed p99 within 1.2x of GitHub's.
 */
async function exchangeBench(): Promise<void> {
  const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
  const PER_ROUND = Number(process.env.BENCH_PER_ROUND ?? 120);
  const mongo = await benchMongo();
  const client = await MongoClient.connect(mongo.uri);
  const issuer = await startOidcIssuer();
  const paths = {
    gitlab: issuer.at('/gitlab', '/oauth/discovery/keys'),
    buildkite: issuer.at('/buildkite', '/.well-known/jwks'),
    circleci: issuer.at('/circleci/org/5f6a1d7e-3c2b-4a8e-9f10-2b3c4d5e6f70', '/.well-known/jwks-pub.json'),
    bitbucket: issuer.at('/bitbucket/2.0/workspaces/acme/pipelines-config/identity/oidc', '/keys.json'),
  };
  const service = await startInProcessService(client, mongo.uri, `bench_rules_${randomBytes(4).toString('hex')}`, systemClock, {
    OIDC_ISSUER: issuer.url,
    OIDC_ALLOW_INSECURE_ISSUER: 'on',
    OIDC_ALLOWED_ISSUERS: Object.values(paths).map((p) => p.url).join(','),
  });
  issuer.bind({ audience: service.baseUrl, now: () => new Date() });
  try {
    const ctx = operatorContext(service.deps);
    const appWithRules = async (rules: Array<Record<string, unknown>>) => {
      const app = await createApp(ctx, { name: 'bench', plan: 'scale' });
      for (const rule of rules) await createOidcRule(ctx, app._id, rule as never);
      return app._id;
    };
    const githubApp = await appWithRules(Array.from({ length: 20 }, (_, i) => ({ subjectPattern: `repo:acme/mobile-app${i === 19 ? '' : `-${i}`}:ref:refs/heads/main`, scopes: ['builds:write'] })));
    const five = (last: Record<string, unknown>, other: (i: number) => Record<string, unknown>) => [...Array.from({ length: 4 }, (_, i) => ({ ...last, ...other(i) })), last];
    const mixedApp = await appWithRules([
      ...five({ provider: 'gitlab', issuer: paths.gitlab.url, subjectPattern: 'project_path:acme/mobile-app:ref_type:branch:ref:main', scopes: ['builds:write'] }, (i) => ({ subjectPattern: `project_path:acme/other-${i}:ref_type:branch:ref:main` })),
      ...five({ provider: 'buildkite', issuer: paths.buildkite.url, organizationSlug: 'acme', pipelineSlug: 'mobile-app', scopes: ['builds:write'] }, (i) => ({ pipelineSlug: `other-${i}` })),
      ...five({ provider: 'circleci', issuer: paths.circleci.url, projectId: 'a1b2c3d4-e5f6-4789-8abc-def012345678', scopes: ['builds:write'] }, (i) => ({ projectId: uuid(i) })),
      ...five({ provider: 'bitbucket', issuer: paths.bitbucket.url, workspaceUuid: '{922e118c-f34f-4226-a897-0e0afbec553d}', repositoryUuid: '{1de489be-ce6a-42a0-a8c8-eadbf1174ac7}', scopes: ['builds:write'] }, (i) => ({ repositoryUuid: `{${uuid(i)}}` })),
    ]);
    const now = () => ({ audience: service.baseUrl, now: new Date() });
    const mixedToken = (i: number): string => {
      switch (i % 4) {
        case 0:
          return paths.gitlab.sign(gitlabClaims({ issuer: paths.gitlab.url, ...now() }), GITLAB_HEADER);
        case 1:
          return paths.buildkite.sign(buildkiteClaims({ issuer: paths.buildkite.url, ...now() }), BUILDKITE_HEADER);
        case 2:
          return paths.circleci.sign(circleciClaims({ issuer: paths.circleci.url, ...now() }), CIRCLECI_HEADER);
        default:
          return paths.bitbucket.sign(bitbucketClaims({ issuer: paths.bitbucket.url, ...now() }, { aud: [bitbucketWorkspaceAudience('{922e118c-f34f-4226-a897-0e0afbec553d}'), service.baseUrl] }), BITBUCKET_HEADER);
      }
    };
    const exchangeAll = async (appId: string, tokens: string[]): Promise<number[]> => {
      const latencies: number[] = [];
      let next = 0;
      const worker = async () => {
        while (next < tokens.length) {
          const token = tokens[next++];
          const started = performance.now();
          const res = await fetch(`${service.baseUrl}/v1/auth/oidc`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.9.${randomInt(256)}.${randomInt(1, 255)}` },
            body: JSON.stringify({ token, appId }),
          });
          await res.arrayBuffer();
          if (res.status !== 200) throw new Error(`an exchange answered ${res.status}`);
          latencies.push(performance.now() - started);
        }
      };
      await Promise.all(Array.from({ length: 4 }, worker));
      return latencies;
    };
    // Warm: each issuer's keys fetched once, the JIT warm.
    await exchangeAll(githubApp, Array.from({ length: 40 }, () => issuer.mint()));
    await exchangeAll(mixedApp, Array.from({ length: 40 }, (_, i) => mixedToken(i)));
    const github: number[] = [];
    const mixed: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Tokens are minted before each round, so signing is not timed; they live five minutes or more.
      const githubTokens = Array.from({ length: PER_ROUND }, () => issuer.mint());
      const mixedTokens = Array.from({ length: PER_ROUND }, (_, i) => mixedToken(i));
      if (round % 2 === 0) {
        github.push(...(await exchangeAll(githubApp, githubTokens)));
        mixed.push(...(await exchangeAll(mixedApp, mixedTokens)));
      } else {
        mixed.push(...(await exchangeAll(mixedApp, mixedTokens)));
        github.push(...(await exchangeAll(githubApp, githubTokens)));
      }
    }
    const ratio = percentile(mixed, 99) / percentile(github, 99);
    console.log(`\nexchange, ${github.length} tokens each, 4 at a time (ms):      p50      p99`);
    console.log(`20 GitHub rules                                       ${fmt(percentile(github, 50))}   ${fmt(percentile(github, 99))}`);
    console.log(`20 rules across GitLab, Buildkite, CircleCI, Bitbucket ${fmt(percentile(mixed, 50))}   ${fmt(percentile(mixed, 99))}`);
    console.log(`mixed p99 / GitHub p99 = ${ratio.toFixed(2)}; target <= 1.2: ${ratio <= 1.2 ? 'met' : 'NOT met'}`);
  } finally {
    await service.close({ dropDatabase: true });
    await client.close();
    await issuer.close();
    await mongo.stop();
  }
}

if (process.env.BENCH_ONLY !== 'matching') {
  exchangeBench().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
