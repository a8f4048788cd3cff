/**
 * The GraphQL documents the service itself executes (rest/operations) and the console sends (console/operations):
 * one named operation per file (fragment-only files may sit beside them). The console's are also the trusted
 * documents /graphql answers persisted queries from, each under the hash of its exact text.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Kind, parse, type DocumentNode } from 'graphql';
import { documentHash, TRUSTED_ID_PREFIX } from '../src/graphql/document-hash';
import { REPO_ROOT } from '../src/core/paths';

export const REST_OPERATIONS_DIR = path.join(REPO_ROOT, 'rest', 'operations');
export const CONSOLE_OPERATIONS_DIR = path.join(REPO_ROOT, 'console', 'operations');

export interface OperationFile {
  file: string;
  text: string;
  document: DocumentNode;
  /** The operation's name; null for a file of fragments only. */
  operationName: string | null;
}

/** Every .graphql file of a folder, in name order, each holding at most one operation and that one named. */
export function readOperationFiles(dir: string): OperationFile[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.graphql'))
    .sort()
    .map((name) => {
      const file = path.join(dir, name);
      const text = fs.readFileSync(file, 'utf8');
      const document = parse(text);
      const operations = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
      if (operations.length > 1) throw new Error(`${path.relative(REPO_ROOT, file)}: one operation per file, found ${operations.length}`);
      const operation = operations[0];
      if (operation && !operation.name) throw new Error(`${path.relative(REPO_ROOT, file)}: the operation needs a name`);
      return { file, text, document, operationName: operation?.name?.value ?? null };
    });
}

/** `{ "sha256:<hex>": "<exact text>" }` of every console operation, in hash order so the file is stable. */
export function trustedDocumentsManifest(files: OperationFile[]): string {
  const entries = files
    .filter((f) => f.operationName)
    .map((f) => [TRUSTED_ID_PREFIX + documentHash(f.text), f.text] as const)
    .sort(([a], [b]) => a.localeCompare(b));
  return `${JSON.stringify(Object.fromEntries(entries), null, 2)}\n`;
}

/** For the console: each operation's registered text and the hash to send instead of it. */
export function trustedDocumentsTable(files: OperationFile[]): string {
  const rows = files
    .filter((f) => f.operationName)
    .map((f) => `  ${f.operationName}: { sha256Hash: ${JSON.stringify(documentHash(f.text))}, document: ${JSON.stringify(f.text)} },`);
  return [
    '',
    '/**',
    ' * Each operation as registered in trusted-documents.json. Send `{ operationName, variables, extensions: { persistedQuery:',
    ' * { version: 1, sha256Hash } } }` to /graphql (no `query`); `document` is the exact registered text.',
    ' */',
    'export const trustedDocuments = {',
    ...rows,
    '} as const;',
    '',
  ].join('\n');
}
