// Protects: the /graphql limits (src/graphql/limits.ts): cost counts a page size passed as a variable (`first` of
// connections, `limit` of older lists) and the schema default when it is left out; depth, aliases and directives are
// refused with their own codes; fragment cycles end; every console operation fits with its default variables.
import { buildSchema, getIntrospectionQuery, parse, specifiedRules, validate, type GraphQLError } from 'graphql';
import { AGGREGATE_COST, limitRules, MAX_ALIASES, MAX_COST, MAX_DEPTH, MAX_DIRECTIVES, operationCost, UNSIZED_LIST } from '../../src/graphql/limits';
import { loadTypeDefs } from '../../src/graphql/type-defs';
import { CONSOLE_OPERATIONS_DIR, readOperationFiles } from '../../scripts/operation-files';

// A connection as SCHEMA13 defines them, beside the service's own schema (which may not have one yet).
const schema = buildSchema(`${loadTypeDefs()}
type LimitsProbeEdge { cursor: String!  node: Build! }
type LimitsProbeConnection { edges: [LimitsProbeEdge!]!  nodes: [Build!]!  totalCount: Int }
extend type Query { limitsProbe(first: Int = 25, after: String): LimitsProbeConnection! }
`);

const refusals = (source: string) =>
  validate(schema, parse(source), [...specifiedRules, ...limitRules]).map((e: GraphQLError) => ({ code: e.extensions.code, message: e.message }));
const cost = (source: string, variables?: Record<string, unknown>) => operationCost(schema, parse(source), variables, undefined);

describe('cost', () => {
  const builds = 'query($a: ID!, $n: Int) { builds(appId: $a, limit: $n) { id version scans { id grade } } }';
  // Per build: id, version, and scans (1 + UNSIZED_LIST x 2 fields).
  const perBuild = 2 + 1 + UNSIZED_LIST * 2;

  it('multiplies by a `limit` passed as a variable, and by the schema default when it is left out', () => {
    expect(cost(builds, { a: 'app_1', n: 100 })).toBe(1 + 100 * perBuild);
    expect(cost(builds, { a: 'app_1', n: 3 })).toBe(1 + 3 * perBuild);
    expect(cost(builds, { a: 'app_1' })).toBe(1 + 25 * perBuild); // builds(limit: Int = 25)
    expect(cost('{ builds(appId: "app_1", limit: 100) { id version scans { id grade } } }')).toBe(1 + 100 * perBuild);
  });

  it('prices a scan\'s findings at the most a scan keeps (100), not as a list of unknown size', () => {
    expect(cost('{ scan(id: "scn_1") { id findings { id title } } }')).toBe(1 + 1 + (1 + 100 * 2));
    // 38 builds with every finding of their scans, as much package text as a request could ask for, no longer fit.
    expect(cost('{ builds(appId: "app_1", limit: 38) { latestStaticScan { findings { id severity title detail fix } } } }')).toBeGreaterThan(MAX_COST);
  });

  it('multiplies a connection by `first` (a variable too), counting its edges and nodes once', () => {
    const page = 'query($n: Int) { limitsProbe(first: $n) { totalCount edges { cursor node { id } } nodes { id } } }';
    // totalCount 1 + edges (1 + cursor 1 + node (1 + id 1)) + nodes (1 + id 1) = 7 per item.
    expect(cost(page, { n: 100 })).toBe(1 + 100 * 7);
    expect(cost(page, { n: 10 })).toBe(1 + 10 * 7);
    expect(cost(page, {})).toBe(1 + 25 * 7);
  });

  it('counts a connection once: `nodes` of a sized connection is not multiplied again', () => {
    // nodes (1 + 2 fields) + pageInfo (1 + hasNextPage 1) per item.
    expect(cost('{ auditLogConnection(first: 100) { nodes { id action } pageInfo { hasNextPage } } }')).toBe(1 + 100 * (3 + 2));
  });

  it('refuses what the old hand-written check let through: a large page size in a variable', () => {
    expect(cost(builds, { a: 'app_1', n: 100 })).toBeGreaterThan(MAX_COST);
    expect(cost(builds, { a: 'app_1', n: 25 })).toBeLessThanOrEqual(MAX_COST);
  });

  it('prices a dashboard aggregate by the rows it may read, not by the rows it returns', () => {
    const range = { from: '2026-08-01T00:00:00.000Z', to: '2026-11-01T00:00:00.000Z' };
    expect(cost('query($r: DateRange!) { app(id: "app_1") { threatBreakdown(range: $r, by: [], first: 1) { threats } } }', { r: range })).toBe(1 + AGGREGATE_COST + 1);
    expect(cost('query($r: DateRange!) { app(id: "app_1") { threatTrend(range: $r) { day threats } } }', { r: range })).toBe(1 + AGGREGATE_COST + UNSIZED_LIST * 2);
    expect(cost('{ latestGradeDistribution { grade } }')).toBe(AGGREGATE_COST + UNSIZED_LIST);
  });

  it('ends on fragment cycles (graphql refuses them; measuring them must not hang first)', () => {
    const cyclic = '{ build(id: "b") { ...A } } fragment A on Build { id ...B } fragment B on Build { version ...A }';
    expect(typeof cost(cyclic)).toBe('number');
    expect(refusals(cyclic).map((r) => r.message)).toContain('Cannot spread fragment "A" within itself via "B".');
  });
});

describe('validation rules', () => {
  // The service's types do not nest without end; __type > ofType > ofType ... does, to any depth (levels counts name).
  const nest = (levels: number) => `{ __type(name: "Build") { ${'ofType { '.repeat(levels - 2)}name${' }'.repeat(levels - 2)} } }`;

  it('refuses a query deeper than MAX_DEPTH with QUERY_TOO_DEEP, and accepts one at it', () => {
    expect(refusals(nest(MAX_DEPTH))).toEqual([]);
    expect(refusals(nest(MAX_DEPTH + 1))).toEqual([{ code: 'QUERY_TOO_DEEP', message: `Query depth limit of ${MAX_DEPTH} exceeded, found ${MAX_DEPTH + 1}.` }]);
  });

  it('counts depth through fragments, without counting the spreads themselves', () => {
    const viaFragments = `{ __type(name: "Build") { ...T } } fragment T on __Type { ofType { ...U } } fragment U on __Type { ${'ofType { '.repeat(MAX_DEPTH - 2)}name${' }'.repeat(MAX_DEPTH - 2)} }`;
    expect(refusals(viaFragments)).toEqual([{ code: 'QUERY_TOO_DEEP', message: `Query depth limit of ${MAX_DEPTH} exceeded, found ${MAX_DEPTH + 1}.` }]);
  });

  it('counts a fragment or alias named __schema (GHSA-hmfr-rx46-4jx2: introspection is not counted, lookalikes are)', () => {
    const chain = `${'ofType { '.repeat(MAX_DEPTH - 1)}name${' }'.repeat(MAX_DEPTH - 1)}`;
    const aliased = `{ __schema: __type(name: "Build") { ${chain} } }`;
    expect(refusals(aliased).map((r) => r.code)).toContain('QUERY_TOO_DEEP');
    const fragment = `query __schema { ...__schema } fragment __schema on Query { __type(name: "Build") { ${chain} } }`;
    expect(refusals(fragment).map((r) => r.code)).toContain('QUERY_TOO_DEEP');
  });

  it('refuses more than MAX_ALIASES aliases with TOO_MANY_ALIASES', () => {
    const aliases = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: build(id: "b${i}") { id }`).join(' ')} }`;
    expect(refusals(aliases(MAX_ALIASES))).toEqual([]);
    expect(refusals(aliases(MAX_ALIASES + 1))).toEqual([{ code: 'TOO_MANY_ALIASES', message: `Aliases limit of ${MAX_ALIASES} exceeded, found ${MAX_ALIASES + 1}.` }]);
  });

  it('counts aliases hidden in fragments', () => {
    const inFragment = `{ build(id: "b") { ...F } } fragment F on Build { ${Array.from({ length: MAX_ALIASES + 1 }, (_, i) => `v${i}: version`).join(' ')} }`;
    expect(refusals(inFragment).map((r) => r.code)).toEqual(['TOO_MANY_ALIASES']);
  });

  it('refuses more than MAX_DIRECTIVES directives with TOO_MANY_DIRECTIVES', () => {
    const directives = (n: number) => `{ ping ${'@include(if: true) '.repeat(n)}}`;
    expect(refusals(directives(MAX_DIRECTIVES)).map((r) => r.code)).not.toContain('TOO_MANY_DIRECTIVES');
    expect(refusals(directives(MAX_DIRECTIVES + 1)).map((r) => r.code)).toContain('TOO_MANY_DIRECTIVES');
  });
});

it('lets the introspection query Apollo Sandbox sends through', () => {
  const introspection = getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true });
  expect(refusals(introspection)).toEqual([]);
  expect(cost(introspection)).toBeLessThanOrEqual(MAX_COST);
});

/** Values for the console's required variables, as the console sends them (an id, a 92-day range). */
const CONSOLE_VARIABLES: Record<string, unknown> = {
  appId: 'app_0000000000000000',
  scanId: 'scn_0000000000000000',
  id: 'key_0000000000000000',
  range: { from: '2026-08-01T00:00:00.000Z', to: '2026-11-01T00:00:00.000Z' },
};

it('lets every console operation through the limits with its variables', () => {
  for (const f of readOperationFiles(CONSOLE_OPERATIONS_DIR).filter((o) => o.operationName)) {
    expect({ file: f.file, refusals: validate(schema, f.document, limitRules).map((e) => e.message) }).toEqual({ file: f.file, refusals: [] });
    expect(operationCost(schema, f.document, CONSOLE_VARIABLES, undefined)).toBeLessThanOrEqual(MAX_COST);
  }
});
