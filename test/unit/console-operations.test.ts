// Protects: no console operation reads a deprecated field, argument or enum value of the staff schema (the console
// is the schema's showcase: it moves to the connections when the old lists are deprecated), and each one stays
// within the cost limit on its largest page, so the console is never refused by its own service.
import path from 'node:path';
import { buildSchema, getNamedType, isInputObjectType, parse, TypeInfo, visit, visitWithTypeInfo, type DocumentNode, type GraphQLSchema } from 'graphql';
import { loadTypeDefs } from '../../src/graphql/type-defs';
import { MAX_COST, operationCost } from '../../src/graphql/limits';
import { CONSOLE_OPERATIONS_DIR, readOperationFiles } from '../../scripts/operation-files';

const schema = buildSchema(loadTypeDefs());
const consoleOps = readOperationFiles(CONSOLE_OPERATIONS_DIR).filter((f) => f.operationName);

/** `Type.field: reason` for every deprecated field, argument and enum value the document uses. */
function deprecatedUses(s: GraphQLSchema, document: DocumentNode): string[] {
  const typeInfo = new TypeInfo(s);
  const found: string[] = [];
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Field() {
        const field = typeInfo.getFieldDef();
        const parent = typeInfo.getParentType();
        if (field?.deprecationReason != null) found.push(`${parent?.name}.${field.name}: ${field.deprecationReason}`);
      },
      Argument() {
        const arg = typeInfo.getArgument();
        if (arg?.deprecationReason != null) found.push(`${typeInfo.getParentType()?.name}.${typeInfo.getFieldDef()?.name}(${arg.name}): ${arg.deprecationReason}`);
      },
      ObjectField(node) {
        const parent = getNamedType(typeInfo.getParentInputType());
        const field = isInputObjectType(parent) ? parent.getFields()[node.name.value] : undefined;
        if (field?.deprecationReason != null) found.push(`${parent?.name}.${node.name.value}: ${field.deprecationReason}`);
      },
      EnumValue() {
        const value = typeInfo.getEnumValue();
        if (value?.deprecationReason != null) found.push(`${value.name}: ${value.deprecationReason}`);
      },
    }),
  );
  return found;
}

it('reads the console operations', () => {
  expect(consoleOps.map((f) => f.operationName)).toEqual(expect.arrayContaining(['AppBuilds', 'AppKeys', 'AppThreats', 'AttestVerdicts', 'ConsoleApps', 'RefusedExchanges']));
});

it('finds a deprecated field, argument and enum value when a document uses one', () => {
  const s = buildSchema(`
    enum Mode { old @deprecated(reason: "gone") new }
    input Filter { since: Int @deprecated(reason: "use from") from: Int }
    type Query { list(limit: Int @deprecated(reason: "use first"), first: Int): [Int] @deprecated(reason: "use page") page(mode: Mode, filter: Filter): Int }
  `);
  expect(deprecatedUses(s, parse('{ list(limit: 1) page(mode: old, filter: { since: 1 }) }'))).toEqual([
    'Query.list: use page',
    'Query.list(limit): use first',
    'old: gone',
    'Filter.since: use from',
  ]);
  expect(deprecatedUses(s, parse('{ list(first: 1) page(mode: new) }'))).toEqual(['Query.list: use page']);
  expect(deprecatedUses(s, parse('{ page(mode: new, filter: { from: 1 }) }'))).toEqual([]);
});

it('finds the deprecated lists of the staff schema (the walk reads the real schema)', () => {
  expect(deprecatedUses(schema, parse('query($a: ID!) { builds(appId: $a) { id } app(id: $a) { apiKeys { id } } }'))).toEqual([
    'Query.builds: Use App.builds, a connection with filters.',
    'App.apiKeys: Use keys, a connection.',
  ]);
});

describe.each(consoleOps.map((f) => [path.basename(f.file), f] as const))('console/operations/%s', (_name, f) => {
  it('uses no deprecated field, argument or enum value', () => {
    expect(deprecatedUses(schema, f.document)).toEqual([]);
  });
  it(`costs at most ${MAX_COST} (the cost check counts its pages as asked)`, () => {
    const variables = { appId: 'app_x', id: 'x', scanId: 'scn_x', after: 'cursor', filter: { platform: 'android', grade: 'A' }, range: { from: '2026-01-01', to: '2026-03-31' } };
    const used = Object.fromEntries(Object.entries(variables).filter(([name]) => f.text.includes(`$${name}`)));
    expect(operationCost(schema, f.document, used, f.operationName ?? undefined)).toBeLessThanOrEqual(MAX_COST);
  });
});
