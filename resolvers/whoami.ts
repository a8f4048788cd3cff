import type { Resolvers } from '../src/generated/graphql';
import { whoami } from '../src/services/whoami-service';

export const whoamiResolvers: Resolvers = {
  Query: {
    whoami: (_p, _a, ctx) => whoami(ctx),
  },
};
