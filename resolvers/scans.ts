import type { Resolvers } from '../src/generated/graphql';
import { getScan } from '../src/services/scans-service';

export const scanResolvers: Resolvers = {
  Query: {
    scan: (_p, { id }, ctx) => getScan(ctx, id),
  },
};
