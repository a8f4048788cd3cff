import type { Resolvers } from '../src/generated/graphql';
import { verifyAttestation } from '../src/services/attest-service';

export const attestResolvers: Resolvers = {
  Mutation: {
    verifyAttest: (_p, { input }, ctx) => verifyAttestation(ctx, input),
  },
};
