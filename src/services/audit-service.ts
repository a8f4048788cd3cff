import { createHash } from 'node:crypto';
import type { RequestContext } from './context';
import { AUDIT_ACTIONS, type AuditAction, type AuditDoc } from '../data/audit-repo';
import { newId } from '../core/ids';
import { validationFailed } from '../core/errors';
import { appAccess, requireStaff } from '../auth/authorize';
import type { AppDoc } from '../data/apps-repo';
import { FORMER_KINDS, firstOfMore, keysetConnection, notCounted, pageSize, resumeAfter, type AuditEventConnectionPage, type PageArgs } from './pages';

export interface AuditEntryInput {
  appId: string;
  action: AuditAction;
  subject?: string | null;
  reason?: string | null;
  ruleId?: string | null;
  details?: AuditDoc['details'];
  claims?: AuditDoc['claims'];
  rules?: AuditDoc['rules'];
  /** Who did it, as actorOf writes it; absent for what no caller did (a refused exchange). */
  actor?: string | null;
}

/** Records an audit entry for the organization of the app. Never pass a token: subjects and reasons only. */
export async function recordAudit(ctx: RequestContext, entry: AuditEntryInput): Promise<void> {
  const deps = ctx.deps;
  const app = await deps.repos.apps.findById(entry.appId);
  if (!app) return; // no tenant to record for (an unknown app id in a refused exchange)
  await deps.repos.audit.insert({
    _id: newId('aud'),
    appId: app._id,
    org: app.org,
    action: entry.action,
    occurredAt: deps.clock.now(),
    subject: entry.subject ?? null,
    reason: entry.reason ?? null,
    ruleId: entry.ruleId ?? null,
    details: entry.details ?? {},
    ...(entry.claims ? { claims: entry.claims } : {}),
    ...(entry.rules ? { rules: entry.rules } : {}),
    ...(entry.actor ? { actor: entry.actor } : {}),
  });
}

/**
 * Who did what an entry records, in actorOf's form. Entries written before every writer used actorOf kept the
 * actor of a trust rule or signer change in `details.actor`, an API key as `key:<id>`: read as `api_key:<id>`.
 */
export function actorOfEntry(entry: Pick<AuditDoc, 'actor' | 'details'>): string | null {
  if (entry.actor) return entry.actor;
  const legacy = entry.details?.actor;
  if (typeof legacy !== 'string') return null;
  return legacy.startsWith('key:') ? `api_key:${legacy.slice('key:'.length)}` : legacy;
}

/**
 * Records a refusal as a counted entry: one entry per app, action, reason and bucket, whose `count` grows, so that
 * repeating one request cannot grow an app's trail without bound. The bucket is the minute by default (refusals
 * that prove nothing, which hold no claims); a verified token's refusals are bucketed by its jti, so one entry per
 * token holds its claims and only a new token from the issuer makes a new entry. Dry runs are counted the same way
 * (oidc-dry-run-service.ts), bucketed by caller, outcome and minute.
 * True when this refusal made a new entry (false for a repetition, or an unknown app).
 */
export async function recordAggregatedAudit(
  ctx: RequestContext,
  entry: {
    appId: string;
    action: AuditAction;
    reason: string | null;
    bucket?: string;
    subject?: string | null;
    claims?: AuditDoc['claims'];
    rules?: AuditDoc['rules'];
    details?: AuditDoc['details'];
    /** oidc.denied: the provider whose model judged the token; part of the entry's key, so each is counted apart. */
    provider?: string;
  },
): Promise<boolean> {
  const deps = ctx.deps;
  const app = await deps.repos.apps.findById(entry.appId);
  if (!app) return false;
  const now = deps.clock.now();
  const bucket = entry.bucket ?? `minute:${Math.floor(now.getTime() / 60_000)}`;
  const counted = entry.provider ? `${bucket}\n${entry.provider}` : bucket;
  const key = createHash('sha256').update(`${app._id}\n${entry.action}\n${entry.reason ?? ''}\n${counted}`).digest('base64url').slice(0, 24);
  return deps.repos.audit.incrementAggregate({
    _id: `aud_${key}`,
    appId: app._id,
    org: app.org,
    action: entry.action,
    occurredAt: now, // the first occurrence
    subject: entry.subject ?? null,
    reason: entry.reason,
    ruleId: null,
    details: entry.details ?? {},
    ...(entry.claims ? { claims: entry.claims } : {}),
    ...(entry.rules ? { rules: entry.rules } : {}),
    ...(entry.provider ? { provider: entry.provider } : {}),
  });
}

/** Who acts, in the one form every audit entry records: `staff:<id>`, `api_key:<id>`, `oidc_rule:<id>`, `operator:<user>`. */
export function actorOf(ctx: RequestContext): string {
  const p = ctx.principal;
  switch (p.kind) {
    case 'staff':
      return `staff:${p.staffId}`;
    case 'api_key':
      return `api_key:${p.keyId}`;
    case 'oidc':
      return `oidc_rule:${p.bucketRuleId}`;
    case 'operator':
      return p.user ? `operator:${p.user}` : 'operator';
    case 'anonymous':
      return 'anonymous';
  }
}

export interface ActionAuditInput {
  /** Who did it; actorOf(ctx) when not given. */
  actor?: string;
  action: AuditAction;
  resource: string;
  appId?: string | null;
  details?: AuditDoc['details'];
}

/**
 * Records a staff or operator mutation: who (`actor`) did what (`action`) to which `resource`. An entry about an app
 * (its creation, its keys) carries the app's id, so the app's trail shows it (`App.auditEvents`, `shieldgate audit
 * --app`, `GET /v1/apps/{id}/audit-events`): a key holder sees who made or revoked the app's keys. Entries about no
 * app (staff tokens, signing keys) stay in the service's own log. Entries stored before named the app only in
 * `details.appId` (their `appId` null): they read as they did, in the service's log.
 */
export async function recordAction(ctx: RequestContext, entry: ActionAuditInput): Promise<void> {
  const deps = ctx.deps;
  const actor = entry.actor ?? actorOf(ctx);
  const app = entry.appId ? await deps.repos.apps.findById(entry.appId) : null;
  await deps.repos.audit.insert({
    _id: newId('aud'),
    appId: app?._id ?? null,
    org: app?.org ?? null,
    action: entry.action,
    occurredAt: deps.clock.now(),
    subject: null,
    reason: null,
    ruleId: null,
    details: { ...(entry.details ?? {}), ...(app ? { appId: app._id } : {}) },
    actor,
    resource: entry.resource,
  });
}

function auditAction(action: string | null | undefined): AuditAction | null {
  if (!action) return null;
  if (!(AUDIT_ACTIONS as readonly string[]).includes(action)) throw validationFailed([{ pointer: '/action', message: `must be one of ${AUDIT_ACTIONS.join(', ')}` }]);
  return action as AuditAction;
}

async function auditConnection(ctx: RequestContext, appId: string | null, args: PageArgs & { action?: string | null }): Promise<AuditEventConnectionPage> {
  const size = pageSize(args.first);
  const action = auditAction(args.action);
  const kind = 'connection:audit';
  const bound = { appId, action };
  const after = resumeAfter(ctx, kind, bound, args.after, FORMER_KINDS.audit);
  const page = await ctx.repos.audit.list(appId, { limit: size, action: action ?? undefined, after: after && { occurredAt: after.at, id: after.id } });
  const docs = page.hasMore ? [...page.data, ...page.data.slice(-1)] : page.data;
  return keysetConnection(ctx, { kind, bound, after, ...firstOfMore(docs, size), timeOf: (d) => d.occurredAt }, notCounted);
}

/** The app's audit trail, newest first: whoever may read its trust rules (as GET /v1/apps/{id}/audit-events). */
export async function appAuditConnection(ctx: RequestContext, app: AppDoc, args: PageArgs & { action?: string | null }): Promise<AuditEventConnectionPage> {
  await appAccess(ctx, 'rules:read', app._id, { write: false });
  return auditConnection(ctx, app._id, args);
}

/** Admin staff: every audit entry, of every app and of none. */
export async function auditLogConnection(ctx: RequestContext, args: PageArgs & { action?: string | null }): Promise<AuditEventConnectionPage> {
  requireStaff(ctx, { write: true });
  return auditConnection(ctx, null, args);
}
