import type { AuditEventConnectionResolvers, AuditEventResolvers, Resolvers, TokenClaimsResolvers } from '../src/generated/graphql';
import type { AuditClaims, AuditDoc } from '../src/data/audit-repo';
import type { AuditEventConnectionPage } from '../src/services/pages';
import { actorOfEntry } from '../src/services/audit-service';
import { auditLogConnection } from '../src/services/connections';
import { connectionFields, type MappedResolvers } from './views';

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
