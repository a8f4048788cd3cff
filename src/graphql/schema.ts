import { makeExecutableSchema } from '@graphql-tools/schema';
import type { GraphQLSchema } from 'graphql';
import { loadTypeDefs } from './type-defs';
import { resolvers } from '../../resolvers';

/** One executable schema per process: /graphql serves it and the REST facade executes documents against it. */
export function buildSchema(): GraphQLSchema {
  return makeExecutableSchema({ typeDefs: loadTypeDefs(), resolvers });
}
