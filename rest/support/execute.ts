import { execute as executeGraphql, GraphQLError } from 'graphql';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { RequestContext } from '../../src/services/context';
import { isDomainError } from '../../src/core/errors';
import { operationCost } from '../../src/graphql/limits';

/**
 * Executes a document against the schema in-process, with the request's own context: no HTTP hop back into the
 * server. Documents are the typed ones graphql-codegen compiles from rest/operations/*.graphql (validated against
 * the schema there), so result and variables are checked where they are used. A domain error raised by a service
 * comes back out as itself, so the REST edge can map it to a problem.
 *
 * Its cost is measured as /graphql measures it and recorded for metrics, but not refused: these documents are fixed
 * and their variables bounded by the OpenAPI contract (a page of 100 audit events is an ordinary REST request).
 */
export async function execute<TData, TVariables extends Record<string, unknown>>(
  ctx: RequestContext,
  document: TypedDocumentNode<TData, TVariables>,
  variables: TVariables,
): Promise<TData> {
  // A document without variables always costs the same: priced once (whoami is the most frequent request of all).
  const fixed = Object.keys(variables).length === 0;
  const costs = ctx.deps.instance.fixedDocumentCosts;
  const known = fixed ? costs.get(document) : undefined;
  if (known !== undefined) ctx.graphqlCost = known;
  else {
    try {
      ctx.graphqlCost = operationCost(ctx.deps.schema, document, variables, undefined);
      if (fixed) costs.set(document, ctx.graphqlCost);
    } catch (error) {
      if (!(error instanceof GraphQLError)) throw error; // variables that do not fit: execution says so precisely
    }
  }
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
