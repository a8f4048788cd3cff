import { execute as executeGraphql, GraphQLError } from 'graphql';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { RequestContext } from '../../src/services/context';
import { isDomainError } from '../../src/core/errors';

/**
 * Executes a document against the schema in-process, with the request's own context: no HTTP hop back into the
 * server. Documents are the typed ones graphql-codegen compiles from rest/operations/*.graphql (validated against
 * the schema there), so result and variables are checked where they are used. A domain error raised by a service
 * comes back out as itself, so the REST edge can map it to a problem.
 *
 * It is not priced: /graphql's cost limit and its cost metric are for documents a client writes, and these are fixed,
 * their variables bounded by the OpenAPI contract (a page of 100 audit events is an ordinary REST request).
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
