// Protects: a staff token's /graphql limit counts what its operations cost, not only how many there are
// (GRAPHQL_STAFF_COST_PER_MINUTE, docs/configuration.md; src/graphql/gate.ts). A token running a few operations near
// the cost limit is refused 429 `rate_limited` with Retry-After once its budget is spent, while another token runs
// the same number of cheap ones; a refused operation spends nothing, so a cheap one still fits after it; the
// RateLimit-* headers show the budget each operation took from.
import { buildSchema, parse } from 'graphql';
import { startHarness, type Harness } from '../support/harness';
import { gql } from './threats-support';
import { loadTypeDefs } from '../../src/graphql/type-defs';
import { MAX_COST, operationCost } from '../../src/graphql/limits';

const BUDGET = 12_000;
/** Eight dashboard aggregates in one operation: near the cost limit, under it. */
const EXPENSIVE = `query Grades { ${Array.from({ length: 8 }, (_, i) => `g${i}: latestGradeDistribution { grade count }`).join(' ')} }`;
const CHEAP = 'query Whoami { staffWhoami { id role } }';

const schema = buildSchema(loadTypeDefs());
const costOf = (query: string) => operationCost(schema, parse(query), {}, undefined);

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ jobs: false, env: { GRAPHQL_STAFF_COST_PER_MINUTE: String(BUDGET) } });
});
afterAll(async () => h.close());

async function post(token: string, query: string) {
  const res = await h.api('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ query }) });
  return { status: res.status, headers: res.headers, body: (await res.json()) as { data?: any; errors?: any[] } };
}

it('refuses a token whose few costly operations spent its budget, while as many cheap ones pass', async () => {
  const expensive = costOf(EXPENSIVE);
  const cheap = costOf(CHEAP);
  expect(expensive).toBeLessThanOrEqual(MAX_COST);
  // As many operations as take one more than the budget holds of the costly kind.
  const runs = Math.floor(BUDGET / expensive) + 1;
  expect(runs * cheap).toBeLessThan(BUDGET);

  const costly = await h.newStaff('support');
  const answers = [];
  for (let i = 0; i < runs; i++) answers.push(await post(costly, EXPENSIVE));
  for (const [i, a] of answers.slice(0, -1).entries()) {
    expect(a.status).toBe(200);
    expect(a.body.errors).toBeUndefined();
    expect(a.headers.get('ratelimit-limit')).toBe(String(BUDGET));
    expect(a.headers.get('ratelimit-remaining')).toBe(String(BUDGET - expensive * (i + 1)));
  }
  const refused = answers[runs - 1];
  expect(refused.status).toBe(429);
  expect(refused.body.data).toBeUndefined();
  expect(refused.body.errors?.[0].extensions).toMatchObject({ code: 'rate_limited', retryAfter: expect.any(Number) });
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(refused.headers.get('ratelimit-remaining')).toBe(String(BUDGET - expensive * (runs - 1)));

  // Nothing was spent by the refusal: a cheap operation fits what is left.
  const after = await post(costly, CHEAP);
  expect(after.status).toBe(200);
  expect(after.headers.get('ratelimit-remaining')).toBe(String(BUDGET - expensive * (runs - 1) - cheap));

  const light = await h.newStaff('support');
  for (let i = 0; i < runs; i++) {
    const a = await post(light, CHEAP);
    expect(a.status).toBe(200);
    expect(a.body.data.staffWhoami.role).toBe('support');
    expect(a.headers.get('ratelimit-remaining')).toBe(String(BUDGET - cheap * (i + 1)));
  }
});

it('still counts requests per client address before authentication', async () => {
  const anonymous = await gql(h, 'not-a-token', CHEAP);
  expect(anonymous.status).toBe(401);
  const res = await h.api('/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: CHEAP }) });
  expect(res.headers.get('ratelimit-limit')).toBe(String(h.deps.config.graphqlAnonymousLimit));
});
