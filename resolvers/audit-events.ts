import type { AppResolvers, AuditEventConnectionResolvers, AuditEventResolvers, Resolvers, TokenClaimsResolvers } from '../src/generated/graphql';
import type { RequestContext } from '../src/services/context';
import type { AppDoc } from '../src/data/apps-repo';
import type { AuditClaims, AuditDoc } from '../src/data/audit-repo';
import type { AuditEventConnectionPage } from '../src/services/pages';
import { actorOfEntry, appAuditConnection, auditLogConnection } from '../src/services/audit-service';
import { connectionFields, type MappedResolvers } from './views';

/** The App's audit trail. */
export const appAuditFields: Required<Pick<AppResolvers<RequestContext, AppDoc>, 'auditEvents'>> = {
  auditEvents: (a, args, ctx) => appAuditConnection(ctx, a, args),
};

/** The entry's org and details stay inside; only the app a staff action concerned is shown (targetAppId). */
const auditEvent: MappedResolvers<AuditEventResolvers, AuditDoc> = {
  id: (e) => e._id,
  claims: (e) => e.claims ?? null,
  provider: (e) => (e.action === 'oidc.denied' ? (e.provider ?? 'github') : null),
  rules: (e) => e.rules ?? null,
  count: (e) => e.count ?? null,
  actor: (e) => actorOfEntry(e),
  resource: (e) => e.resource ?? null,
  targetAppId: (e) => (typeof e.details?.appId === 'string' ? e.details.appId : null),
};

/** GitHub's claims by name (the default resolvers), every provider's as a list. */
const tokenClaims: TokenClaimsResolvers = {
  all: (claims: AuditClaims) => Object.entries(claims).map(([name, value]) => ({ name, value })),
};

const auditEventConnection: MappedResolvers<AuditEventConnectionResolvers, AuditEventConnectionPage> = connectionFields<AuditDoc>();

export const auditEventResolvers: Resolvers = {
  Query: {
    auditLogConnection: (_p, args, ctx) => auditLogConnection(ctx, args),
  },
  AuditEvent: auditEvent,
  AuditEventConnection: auditEventConnection,
  TokenClaims: tokenClaims,
};
