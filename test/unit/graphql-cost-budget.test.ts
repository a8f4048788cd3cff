// Protects: the staff token's default cost budget (GRAPHQL_STAFF_COST_PER_MINUTE) leaves the console's own pages
// plenty of room: every console operation, each run once, fits in it several times over a minute, and it holds at least
// one operation at the cost limit whatever it is set to.
import { buildSchema } from 'graphql';
import { loadConfig, ConfigError } from '../../src/core/config';
import { loadTypeDefs } from '../../src/graphql/type-defs';
import { MAX_COST, operationCost } from '../../src/graphql/limits';
import { CONSOLE_OPERATIONS_DIR, readOperationFiles } from '../../scripts/operation-files';

const schema = buildSchema(loadTypeDefs());
/** The variables the console sends, as console-operations.test.ts prices them. */
const variables: Record<string, unknown> = { appId: 'app_x', id: 'x', scanId: 'scn_x', after: 'cursor', filter: { platform: 'android', grade: 'A' }, range: { from: '2026-01-01', to: '2026-03-31' } };

it('holds every console operation five times a minute by default', () => {
  const operations = readOperationFiles(CONSOLE_OPERATIONS_DIR).filter((f) => f.operationName);
  expect(operations.length).toBeGreaterThan(5);
  const tour = operations.reduce((sum, f) => {
    const used = Object.fromEntries(Object.entries(variables).filter(([name]) => f.text.includes(`$${name}`)));
    return sum + operationCost(schema, f.document, used, f.operationName ?? undefined);
  }, 0);
  expect(loadConfig({}).graphqlStaffCostPerMinute).toBeGreaterThanOrEqual(5 * tour);
});

it('refuses a budget below one operation at the cost limit', () => {
  expect(loadConfig({ GRAPHQL_STAFF_COST_PER_MINUTE: String(MAX_COST) }).graphqlStaffCostPerMinute).toBe(MAX_COST);
  expect(() => loadConfig({ GRAPHQL_STAFF_COST_PER_MINUTE: String(MAX_COST - 1) })).toThrow(ConfigError);
});
