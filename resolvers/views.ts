import type { AppDoc } from '../src/data/apps-repo';
import type { ApiKeyDoc } from '../src/data/api-keys-repo';
import type { AuditDoc } from '../src/data/audit-repo';

/** Document -> GraphQL object. Stored-only fields (hashes, device ids) are left out here, on purpose. */
export const toApp = (doc: AppDoc) => ({ id: doc._id, name: doc.name, plan: doc.plan, org: doc.org, createdAt: doc.createdAt });

export const toApiKey = (doc: ApiKeyDoc) => ({
  id: doc._id,
  appId: doc.appId,
  name: doc.name,
  mode: doc.mode,
  scopes: doc.scopes,
  createdAt: doc.createdAt,
  expiresAt: doc.expiresAt,
  revokedAt: doc.revokedAt,
});

export const toAuditEvent = (doc: AuditDoc) => ({
  id: doc._id,
  appId: doc.appId,
  action: doc.action,
  occurredAt: doc.occurredAt,
  subject: doc.subject,
  reason: doc.reason,
  ruleId: doc.ruleId,
  claims: doc.claims ?? null,
  rules: doc.rules ?? null,
  count: doc.count ?? null,
  actor: doc.actor ?? null,
  resource: doc.resource ?? null,
  targetAppId: typeof doc.details?.appId === 'string' ? doc.details.appId : null,
});
