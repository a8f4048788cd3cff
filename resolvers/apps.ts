import type { AppConnectionResolvers, AppResolvers, Resolvers } from '../src/generated/graphql';
import type { AppDoc } from '../src/data/apps-repo';
import type { AppConnectionPage } from '../src/services/pages';
import { appsConnection, createApp, getApp, listApps } from '../src/services/apps-service';
import { connectionFields, type MappedResolvers } from './views';
import { appAuditFields } from './audit-events';
import { appBuildFields } from './builds';
import { appDashboardFields } from './dashboards';
import { appKeyFields } from './keys';
import { appScanFields } from './scans';
import { appSignerFields } from './signers';
import { appSuppressionFields } from './suppressions';
import { appThreatFields } from './threats';
import { appOidcRuleFields } from './oidc-rules';

/** The App: its own id here; each list's field lives in the resolver module of that resource. */
const app: MappedResolvers<AppResolvers, AppDoc> = {
  id: (a) => a._id,
  ...appKeyFields,
  ...appBuildFields,
  ...appScanFields,
  ...appThreatFields,
  ...appOidcRuleFields,
  ...appAuditFields,
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
