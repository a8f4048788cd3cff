// Protects: the parts of the metrics that decide labels and access without a database: GraphQL outcomes read from
// the answer, the cost a request context carries reaching the cost histogram (through a real Express app and the
// real createContext), rate-limit bucket kinds without ids, and the loopback rule of /metrics.
import type { AddressInfo } from 'node:net';
import express, { type Request } from 'express';
import { graphqlMetrics } from '../../src/metrics/graphql';
import { graphqlOutcome } from '../../src/metrics/graphql';
import { STAFF_PRINCIPAL } from '../../src/http/request-state';
import { isDirectLoopback } from '../../src/metrics/endpoint';
import { metrics } from '../../src/metrics/registry';
import { bucketKind } from '../../src/rate-limit/rate-limiter';
import { createContext } from '../../src/services/context';
import { createLogger } from '../../src/core/logger';
import { systemClock } from '../../src/core/clock';
import type { Deps } from '../../src/core/deps';

it('tells GraphQL outcomes apart by status and by whether the answer starts with errors', () => {
  expect(graphqlOutcome(200, '{"data":{"app"', false)).toBe('ok');
  expect(graphqlOutcome(200, '{"errors":[{"me', false)).toBe('error');
  expect(graphqlOutcome(400, '{"errors":[{"me', false)).toBe('invalid');
  expect(graphqlOutcome(403, '{"errors":[{"me', false)).toBe('refused');
  expect(graphqlOutcome(401, undefined, false)).toBe('refused');
  expect(graphqlOutcome(500, undefined, false)).toBe('failed');
  expect(graphqlOutcome(200, undefined, true)).toBe('aborted');
});

it('labels refusals by bucket kind, never by the id in the bucket', () => {
  expect(bucketKind('key:key_0123456789abcdef')).toBe('key');
  expect(bucketKind('rule:rul_0123')).toBe('rule');
  expect(bucketKind('ip:203.0.113.9')).toBe('ip');
  expect(bucketKind('gql-staff:stf_abc')).toBe('gql-staff');
  expect(bucketKind('gql-cost:stf_abc')).toBe('gql-cost');
  expect(bucketKind('gql-ip:::1')).toBe('gql-ip');
  expect(bucketKind('surprise:anything')).toBe('other');
  expect(bucketKind('no-colon')).toBe('other');
});

it('serves /metrics without a token only to a direct loopback connection', () => {
  const req = (remoteAddress: string, headers: Record<string, string> = {}) =>
    ({ socket: { remoteAddress }, get: (name: string) => headers[name.toLowerCase()] }) as unknown as Request;
  expect(isDirectLoopback(req('127.0.0.1'))).toBe(true);
  expect(isDirectLoopback(req('::1'))).toBe(true);
  expect(isDirectLoopback(req('::ffff:127.0.0.1'))).toBe(true);
  expect(isDirectLoopback(req('10.0.0.7'))).toBe(false);
  expect(isDirectLoopback(req('::ffff:10.0.0.7'))).toBe(false);
  expect(isDirectLoopback(req('127.0.0.1', { 'x-forwarded-for': '198.51.100.4' }))).toBe(false);
  expect(isDirectLoopback(req('127.0.0.1', { forwarded: 'for=198.51.100.4' }))).toBe(false);
});

it('records the cost the GraphQL layer set on the request context, under the operation name', async () => {
  const deps = { logger: createLogger('silent'), clock: systemClock, repos: {} } as unknown as Deps;
  const app = express();
  app.use((_req, res, next) => {
    res.locals.shieldgate = { requestId: 'req-cost-probe', logger: deps.logger.child({ requestId: 'req-cost-probe' }) };
    res.locals[STAFF_PRINCIPAL] = { kind: 'staff', staffId: 'stf_probe', role: 'support' }; // as the gate leaves it
    next();
  });
  // Stands where Apollo stands: builds the request's context and keeps it on the request state as its context function
  // does, sets the cost the way the query limits do once they computed it, then answers.
  const graphqlServer: express.RequestHandler = (req, res) => {
    const context = createContext(deps, { kind: 'staff', staffId: 'stf_probe', role: 'support' }, 'req-cost-probe', res.locals.shieldgate.logger);
    res.locals.shieldgate.ctx = context;
    context.graphqlCost = Number(req.body.variables.cost);
    res.type('application/json').send(req.body.variables.fail ? '{"errors":[{"message":"no"}],"data":null}\n' : '{"data":{"__typename":"Query"}}\n');
  };
  app.use('/graphql', graphqlMetrics(), express.json(), graphqlServer);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
  const post = (body: unknown) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.text());
  try {
    await post({ query: 'query CostProbe { __typename }', operationName: 'CostProbe', variables: { cost: 42 } });
    await post({ query: 'query CostProbe { __typename }', operationName: 'CostProbe', variables: { cost: 8, fail: true } });
    const cost = (await metrics.graphqlCost.get()).values.filter((v) => v.labels.operation === 'CostProbe');
    expect(cost.find((v) => v.metricName === 'shieldgate_graphql_operation_cost_sum')?.value).toBe(50);
    expect(cost.find((v) => v.metricName === 'shieldgate_graphql_operation_cost_count')?.value).toBe(2);
    expect(cost.find((v) => v.metricName === 'shieldgate_graphql_operation_cost_bucket' && (v.labels as { le?: number }).le === 10)?.value).toBe(1);
    const operations = (await metrics.graphqlOperations.get()).values.filter((v) => v.labels.operation === 'CostProbe');
    expect(operations.map((v) => [v.labels.outcome, v.value]).sort()).toEqual([['error', 1], ['ok', 1]]);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
