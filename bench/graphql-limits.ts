// GraphQL limits bench: what the query limits add to a request. Times, per operation, graphql-query-complexity's cost
// with variables (run for every /graphql operation and every document the REST facade executes) and the armor
// validation rules (depth, aliases, directives; /graphql only, on top of graphql's own validation, timed beside
// them), on the REST documents (AuditEvents, the largest), the console's, and a worst case the limits allow:
// 15 aliases of a nested page. Target: cost and armor rules together take no longer than graphql's own validation
// of the same document (a relative figure, so it holds on a loaded machine; absolute times are printed too).
// Run: npm run bench:graphql
import { performance } from 'node:perf_hooks';
import { buildSchema, Kind, parse, specifiedRules, validate, type DocumentNode } from 'graphql';
import { limitRules, operationCost } from '../src/graphql/limits';
import { loadTypeDefs } from '../src/graphql/type-defs';
import { CONSOLE_OPERATIONS_DIR, readOperationFiles, REST_OPERATIONS_DIR } from '../scripts/operation-files';

const schema = buildSchema(loadTypeDefs());

function microsPerCall(fn: () => unknown, minMs = 300): number {
  for (let i = 0; i < 50; i++) fn();
  let calls = 0;
  const start = performance.now();
  while (performance.now() - start < minMs) {
    fn();
    calls++;
  }
  return ((performance.now() - start) * 1000) / calls;
}

const rest = readOperationFiles(REST_OPERATIONS_DIR);
const fragments = rest.filter((f) => !f.operationName).flatMap((f) => f.document.definitions);
const documents: Array<[string, DocumentNode, Record<string, unknown>]> = [];
for (const f of rest.filter((o) => o.operationName === 'AuditEvents' || o.operationName === 'GetBuild')) {
  documents.push([`rest ${f.operationName}`, { kind: Kind.DOCUMENT, definitions: [...f.document.definitions, ...fragments] }, { appId: 'app_1', id: 'bld_1', first: 100 }]);
}
for (const f of readOperationFiles(CONSOLE_OPERATIONS_DIR).filter((o) => o.operationName)) documents.push([`console ${f.operationName}`, f.document, {}]);
const aliased = Array.from({ length: 15 }, (_, i) => `a${i}: auditLogConnection(first: 1) { nodes { id rules { id failed { check expected actual } } } }`).join(' ');
documents.push(['15 aliased pages', parse(`{ ${aliased} }`), {}]);

let worst = 0;
let worstUs = 0;
for (const [name, document, variables] of documents) {
  const cost = operationCost(schema, document, variables, undefined);
  const costUs = microsPerCall(() => operationCost(schema, document, variables, undefined));
  const rulesUs = microsPerCall(() => validate(schema, document, limitRules));
  const graphqlUs = microsPerCall(() => validate(schema, document, specifiedRules));
  worst = Math.max(worst, (costUs + rulesUs) / graphqlUs);
  worstUs = Math.max(worstUs, costUs + rulesUs);
  console.log(`${name.padEnd(22)} cost ${String(cost).padStart(6)}  cost ${costUs.toFixed(1).padStart(6)} us  armor rules ${rulesUs.toFixed(1).padStart(6)} us  (graphql's own validation ${graphqlUs.toFixed(1)} us)`);
}
console.log(`limits / graphql's validation, worst: ${worst.toFixed(2)} (target <= 1): ${worst <= 1 ? 'met' : 'NOT met'}; slowest ${(worstUs / 1000).toFixed(2)} ms`);
