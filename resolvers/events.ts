import type { Resolvers } from '../src/generated/graphql';
import { ingestEvents } from '../src/services/events-service';
import { asDate } from './views';

export const eventResolvers: Resolvers = {
  Mutation: {
    ingestEvents: (_p, { events, verdictToken }, ctx) => ingestEvents(ctx, events.map((e) => ({ ...e, occurredAt: asDate(e.occurredAt) })), verdictToken ?? null),
  },
};
