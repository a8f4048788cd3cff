/**
 * Compiles operation files (scripts/operation-files.ts) with graphql-codegen into typed documents. codegen()
 * validates every document against the schema: an invalid one fails `npm run codegen` and `--check`.
 */
import path from 'node:path';
import { codegen } from '@graphql-codegen/core';
import * as operationsPlugin from '@graphql-codegen/typescript-operations';
import * as typedDocumentPlugin from '@graphql-codegen/typed-document-node';
import type { DocumentNode } from 'graphql';
import { REPO_ROOT } from '../src/core/paths';
import type { OperationFile } from './operation-files';

/** Result and variable types plus a TypedDocumentNode per operation (`<Name>Document`). */
export async function typedDocuments(schema: DocumentNode, files: OperationFile[], filename: string): Promise<string> {
  return codegen({
    schema,
    documents: files.map((f) => ({ location: path.relative(REPO_ROOT, f.file), document: f.document })),
    filename,
    config: {
      // DateTime travels as ISO 8601 text both ways (resolvers/scalars.ts).
      scalars: { DateTime: 'string' },
      enumsAsTypes: true,
      useTypeImports: true,
      dedupeFragments: true,
    },
    plugins: [{ typescriptOperations: {} }, { typedDocumentNode: {} }],
    pluginMap: { typescriptOperations: operationsPlugin, typedDocumentNode: typedDocumentPlugin },
  });
}
