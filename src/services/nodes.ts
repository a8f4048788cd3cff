/**
 * node(id): any object of the staff schema by its id alone. The id's prefix says the type (API key ids have none);
 * each type is read with the same authorization as its own lookup, and an object the caller may not read (another
 * app's, for an app credential) is answered like an unknown id: null, so ids of other tenants cannot be probed.
 */
import type { RequestContext } from './context';
import { appFilter, authorize, requireStaff } from '../auth/authorize';
import type { AppDoc } from '../data/apps-repo';
import type { BuildDoc } from '../data/builds-repo';
import type { ScanDoc } from '../data/scans-repo';
import type { ThreatDoc } from '../data/threats-repo';
import type { ApiKeyDoc } from '../data/api-keys-repo';
import type { OidcRuleDoc } from '../data/oidc-rules-repo';
import type { AuditDoc } from '../data/audit-repo';
import { validationFailed } from '../core/errors';
import { getApp } from './apps-service';
import { getBuild } from './builds-service';
import { withMerged } from './threats-service';

export type NodeType = 'App' | 'Build' | 'Scan' | 'Threat' | 'ApiKey' | 'OidcRule' | 'AuditEvent';
export type NodeDoc = AppDoc | BuildDoc | ScanDoc | ThreatDoc | ApiKeyDoc | OidcRuleDoc | AuditDoc;

export const MAX_NODES = 100;

const PREFIXES: Record<string, NodeType> = { app: 'App', bld: 'Build', scn: 'Scan', thr: 'Threat', rul: 'OidcRule', aud: 'AuditEvent' };
const API_KEY_ID = /^[A-Za-z0-9]{20}$/;

/** The type an id names, or null for an id of no known shape. */
export function nodeType(id: string): NodeType | null {
  if (API_KEY_ID.test(id)) return 'ApiKey';
  const prefix = /^([a-z]+)_[A-Za-z0-9_-]+$/.exec(id)?.[1];
  return (prefix && PREFIXES[prefix]) || null;
}

async function scan(ctx: RequestContext, id: string): Promise<ScanDoc | null> {
  return ctx.repos.scans.findById(appFilter(authorize(ctx, 'scans:read', { write: false })), id);
}

async function threat(ctx: RequestContext, id: string): Promise<ThreatDoc | null> {
  const only = appFilter(authorize(ctx, 'threats:read', { write: false }));
  const doc = await ctx.repos.threats.findById(id);
  if (!doc || (only !== null && doc.appId !== only)) return null;
  return (await withMerged(ctx, doc.appId, [doc]))[0];
}

async function rule(ctx: RequestContext, id: string): Promise<OidcRuleDoc | null> {
  const only = appFilter(authorize(ctx, 'rules:read', { write: false }));
  const doc = await ctx.repos.oidcRules.findById(id);
  return doc && (only === null || doc.appId === only) ? doc : null;
}

async function apiKey(ctx: RequestContext, id: string): Promise<ApiKeyDoc | null> {
  requireStaff(ctx, { write: false });
  return ctx.repos.apiKeys.findById(id);
}

/** An app's trail is read by whoever may read its rules; entries of no app (staff and operator actions) by admins only. */
async function auditEvent(ctx: RequestContext, id: string): Promise<AuditDoc | null> {
  const access = authorize(ctx, 'rules:read', { write: false });
  const doc = await ctx.repos.audit.findById(id);
  if (!doc) return null;
  if (doc.appId === null) {
    if (access.kind !== 'staff') return null;
    requireStaff(ctx, { write: true }); // as auditLogConnection: support staff are refused, not told "no such entry"
    return doc;
  }
  return access.kind === 'staff' || doc.appId === access.appId ? doc : null;
}

/** Apps are staff-only objects (as app(id)); an app credential gets null rather than a refusal that confirms the id. */
async function app(ctx: RequestContext, id: string): Promise<AppDoc | null> {
  if (ctx.principal.kind !== 'staff') return null;
  return getApp(ctx, id);
}

export async function findNode(ctx: RequestContext, id: string): Promise<NodeDoc | null> {
  switch (nodeType(id)) {
    case 'App':
      return app(ctx, id);
    case 'Build':
      return getBuild(ctx, id);
    case 'Scan':
      return scan(ctx, id);
    case 'Threat':
      return threat(ctx, id);
    case 'ApiKey':
      return apiKey(ctx, id);
    case 'OidcRule':
      return rule(ctx, id);
    case 'AuditEvent':
      return auditEvent(ctx, id);
    case null:
      return null;
  }
}

export function checkNodeIds(ids: readonly string[]): void {
  if (ids.length > MAX_NODES) throw validationFailed([{ pointer: '/ids', message: `at most ${MAX_NODES} ids` }]);
}
