import type { Resolvers } from '../src/generated/graphql';
import { listAuditForCaller, listAuditLog } from '../src/services/audit-service';
import { toAuditEvent } from './views';

export const auditResolvers: Resolvers = {
  Query: {
    auditEvents: async (_p, args, ctx) => {
      const page = await listAuditForCaller(ctx, { appId: args.appId, action: args.action, limit: args.limit ?? 25, cursor: args.cursor });
      return { ...page, data: page.data.map(toAuditEvent) };
    },
    auditLog: async (_p, args, ctx) => {
      const page = await listAuditLog(ctx, { action: args.action, limit: args.limit ?? 25, cursor: args.cursor });
      return { ...page, data: page.data.map(toAuditEvent) };
    },
  },
};
