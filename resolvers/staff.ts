import type { Resolvers } from '../src/generated/graphql';
import { staffWhoami } from '../src/services/staff-whoami-service';

export const staffResolvers: Resolvers = {
  Query: {
    staffWhoami: (_p, _a, ctx) => staffWhoami(ctx),
  },
};
