import type { AppConnectionResolvers, AppResolvers, Resolvers } from '../src/generated/graphql';
import type { AppDoc } from '../src/data/apps-repo';
import type { AppConnectionPage } from '../src/services/pages';
import { createApp, getApp, listApps } from '../src/services/apps-service';
import { listApiKeys } from '../src/services/keys-service';
import {
  appAuditConnection,
  appsConnection,
  buildsConnection,
  keysConnection,
  latestBuild,
  scansConnection,
  threatsConnection,
  trustRulesConnection,
} from '../src/services/connections';
import { asOptionalDate, connectionFields, type MappedResolvers } from './views';
import { appDashboardFields } from './dashboards';
import { appSignerFields } from './signers';
import { appSuppressionFields } from './suppressions';

const app: MappedResolvers<AppResolvers, AppDoc> = {
  id: (a) => a._id,
  apiKeys: (a, _args, ctx) => listApiKeys(ctx, a._id),
  builds: (a, { first, after, filter }, ctx) =>
    buildsConnection(ctx, a, { first, after, filter: filter && { ...filter, from: asOptionalDate(filter.from), to: asOptionalDate(filter.to) } }),
  scans: (a, args, ctx) => scansConnection(ctx, a, args),
  threats: (a, { first, after, filter }, ctx) =>
    threatsConnection(ctx, a, { first, after, filter: filter && { ...filter, from: asOptionalDate(filter.from), to: asOptionalDate(filter.to) } }),
  trustRules: (a, args, ctx) => trustRulesConnection(ctx, a, args),
  keys: (a, args, ctx) => keysConnection(ctx, a, args),
  auditEvents: (a, args, ctx) => appAuditConnection(ctx, a, args),
  latestBuild: (a, { platform }, ctx) => latestBuild(ctx, a, platform ?? null),
  ...appDashboardFields,
  ...appSignerFields,
  ...appSuppressionFields,
};

const appConnection: MappedResolvers<AppConnectionResolvers, AppConnectionPage> = connectionFields<AppDoc>();

export const appResolvers: Resolvers = {
  Query: {
    app: (_p, { id }, ctx) => getApp(ctx, id),
    apps: (_p, { limit }, ctx) => listApps(ctx, limit ?? 50),
    appsConnection: (_p, args, ctx) => appsConnection(ctx, args),
  },
  Mutation: {
    createApp: (_p, { input }, ctx) => createApp(ctx, input),
  },
  App: app,
  AppConnection: appConnection,
};
