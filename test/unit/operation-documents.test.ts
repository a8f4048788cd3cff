// Protects: every GraphQL document the service executes (rest/operations) or the console sends (console/operations)
// is valid against the schema, one named operation per file; the console's are self-contained (the server runs their
// exact text) and registered in the trusted-documents manifest under the hash of that text.
import fs from 'node:fs';
import path from 'node:path';
import { buildSchema, Kind, parse, validate, type DocumentNode } from 'graphql';
import { loadTypeDefs } from '../../src/graphql/type-defs';
import { documentHash } from '../../src/graphql/document-hash';
import { CONSOLE_OPERATIONS_DIR, REST_OPERATIONS_DIR, readOperationFiles, trustedDocumentsManifest } from '../../scripts/operation-files';
import { REPO_ROOT } from '../../src/core/paths';

const schema = buildSchema(loadTypeDefs());
const rest = readOperationFiles(REST_OPERATIONS_DIR);
const consoleOps = readOperationFiles(CONSOLE_OPERATIONS_DIR);
const restFragments = rest.filter((f) => !f.operationName).flatMap((f) => f.document.definitions);

const messages = (document: DocumentNode) => validate(schema, document).map((e) => e.message);

it('finds the REST and console operations', () => {
  expect(rest.filter((f) => f.operationName).length).toBeGreaterThanOrEqual(17);
  expect(consoleOps.filter((f) => f.operationName).length).toBeGreaterThanOrEqual(1);
});

describe.each(rest.filter((f) => f.operationName).map((f) => [path.basename(f.file), f] as const))('rest/operations/%s', (_name, f) => {
  it('is valid against the schema (with the folder fragments it uses)', () => {
    const used = restFragments.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION && f.text.includes(`...${d.name.value}`));
    expect(messages({ kind: Kind.DOCUMENT, definitions: [...f.document.definitions, ...used] })).toEqual([]);
  });
  it('is named after its file', () => {
    expect(`${f.operationName}.graphql`).toBe(path.basename(f.file));
  });
});

describe.each(consoleOps.map((f) => [path.basename(f.file), f] as const))('console/operations/%s', (_name, f) => {
  it('is one named operation, valid against the schema on its own', () => {
    expect(f.operationName).not.toBeNull();
    expect(messages(f.document)).toEqual([]);
  });
});

it('catches a document that does not fit the schema', () => {
  expect(messages(parse('query Broken($id: ID!) { build(id: $id) { id noSuchField } }'))).toEqual([
    'Cannot query field "noSuchField" on type "Build".',
  ]);
  expect(messages(parse('query Broken { builds(appId: 1, limit: "many") { id } }'))[0]).toMatch(/Int cannot represent/);
});

it('registers each console operation under sha256 of its exact text', () => {
  const manifest = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'src', 'generated', 'trusted-documents.json'), 'utf8'));
  expect(JSON.parse(trustedDocumentsManifest(consoleOps))).toEqual(manifest);
  for (const f of consoleOps) expect(manifest[`sha256:${documentHash(f.text)}`]).toBe(f.text);
  expect(Object.keys(manifest)).toHaveLength(consoleOps.length);
});
