import { execute as executeGraphql } from 'graphql';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { RequestContext } from '../src/context';
import { isDomainError } from '../src/errors';

/**
 * Executes a document against the schema in-process, with the request's own context: no HTTP hop back into the
 * server. Documents are the typed ones graphql-codegen compiles from rest/operations/*.graphql (validated against
 * the schema there), so result and variables are checked where they are used. A domain error raised by a service
 * comes back out as itself, so the REST edge can map it to a problem.
 */
export async function execute<TData, TVariables extends Record<string, unknown>>(
  ctx: RequestContext,
  document: TypedDocumentNode<TData, TVariables>,
  variables: TVariables,
): Promise<TData> {
  const result = await executeGraphql({
    schema: ctx.deps.schema,
    document,
    variableValues: variables,
    contextValue: ctx,
  });
  const error = result.errors?.[0];
  if (error) {
    if (isDomainError(error.originalError)) throw error.originalError;
    throw error.originalError ?? error;
  }
  return result.data as TData;
}
