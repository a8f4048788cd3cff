import { execute as executeGraphql, parse, type DocumentNode } from 'graphql';
import type { RequestContext } from '../src/context';
import { isDomainError } from '../src/errors';

/** A parsed GraphQL document with the types of its result and variables (checked where it is executed). */
export interface TypedDocument<TData, TVariables> {
  readonly ast: DocumentNode;
  readonly __types?: { data: TData; variables: TVariables };
}

export function gqlDocument<TData, TVariables = Record<string, never>>(source: string): TypedDocument<TData, TVariables> {
  return { ast: parse(source) };
}

/**
 * Executes a document against the schema in-process, with the request's own context: no HTTP hop back into the
 * server. A domain error raised by a service comes back out as itself, so the REST edge can map it to a problem.
 */
export async function execute<TData, TVariables>(ctx: RequestContext, doc: TypedDocument<TData, TVariables>, variables: TVariables): Promise<TData> {
  const result = await executeGraphql({
    schema: ctx.deps.schema,
    document: doc.ast,
    variableValues: variables as Record<string, unknown>,
    contextValue: ctx,
  });
  const error = result.errors?.[0];
  if (error) {
    if (isDomainError(error.originalError)) throw error.originalError;
    throw error.originalError ?? error;
  }
  return result.data as TData;
}
