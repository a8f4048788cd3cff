/**
 * The staff schema's lists as Relay connections: keyset pages (newest first by a time and the id) whose cursors are
 * authenticated and bound to the app and filter they were made for, like the REST cursors. Each function authorizes
 * exactly as the older list it replaces did, so REST and GraphQL answer alike.
 */
import type { RequestContext } from './context';
import { appAccess, requireStaff } from '../auth/authorize';
import { PLANS, type AppDoc, type AppQuery, type Plan } from '../data/apps-repo';
import type { BuildDoc, BuildQuery, Platform } from '../data/builds-repo';
import type { ScanEngine } from '../data/scans-repo';
import { AUDIT_ACTIONS, type AuditAction } from '../data/audit-repo';
import { validationFailed, type FieldError } from '../core/errors';
import { GRADE_BANDS } from '../scan/score';
import { toQuery, withMerged, type ThreatFilterInput } from './threats-service';
import {
  FORMER_KINDS,
  boundDate,
  firstOfMore,
  keysetConnection,
  notCounted,
  pageSize,
  resumeAfter,
  type ApiKeyConnectionPage,
  type AppConnectionPage,
  type AuditEventConnectionPage,
  type BuildConnectionPage,
  type OidcRuleConnectionPage,
  type PageArgs,
  type ScanConnectionPage,
  type ThreatConnectionPage,
} from './pages';

export interface AppFilterInput {
  plan?: string | null;
  org?: string | null;
}

/** Staff: apps, newest first, of one plan and/or org. */
export async function appsConnection(ctx: RequestContext, args: PageArgs & { filter?: AppFilterInput | null }): Promise<AppConnectionPage> {
  requireStaff(ctx, { write: false });
  const size = pageSize(args.first);
  const f = args.filter ?? {};
  if (f.plan && !(PLANS as readonly string[]).includes(f.plan)) throw validationFailed([{ pointer: '/filter/plan', message: `must be one of ${PLANS.join(', ')}` }]);
  const query: AppQuery = {};
  if (f.plan) query.plan = f.plan as Plan;
  if (f.org) query.org = f.org;
  const kind = 'connection:apps';
  const after = resumeAfter(ctx, kind, query, args.after);
  const docs = await ctx.repos.apps.page(query, size, after);
  return keysetConnection(ctx, { kind, bound: query, after, ...firstOfMore(docs, size), timeOf: (d) => d.createdAt }, () => ctx.repos.apps.count(query));
}

export interface BuildFilterInput {
  platform?: string | null;
  version?: string | null;
  grade?: string | null;
  from?: Date | null;
  to?: Date | null;
}

function buildQuery(filter: BuildFilterInput | null | undefined): BuildQuery {
  const f = filter ?? {};
  const errors: FieldError[] = [];
  if (f.platform && f.platform !== 'android' && f.platform !== 'ios') errors.push({ pointer: '/filter/platform', message: 'must be android or ios' });
  if (f.version != null && (f.version.length < 1 || f.version.length > 40)) errors.push({ pointer: '/filter/version', message: 'must be 1 to 40 characters' });
  if (f.grade != null && !GRADE_BANDS.some((b) => b.grade === f.grade)) {
    errors.push({ pointer: '/filter/grade', message: `must be one of ${GRADE_BANDS.map((b) => b.grade).join(', ')}` });
  }
  if (f.from && f.to && f.from >= f.to) errors.push({ pointer: '/filter/to', message: 'must be after from' });
  if (errors.length) throw validationFailed(errors);
  const query: BuildQuery = {};
  if (f.platform) query.platform = f.platform as Platform;
  if (f.version) query.version = f.version;
  if (f.grade) query.grade = f.grade;
  if (f.from) query.from = f.from;
  if (f.to) query.to = f.to;
  return query;
}

/** Builds of the app, newest first, by platform, version, static grade and registration time. */
export async function buildsConnection(ctx: RequestContext, app: AppDoc, args: PageArgs & { filter?: BuildFilterInput | null }): Promise<BuildConnectionPage> {
  await appAccess(ctx, 'builds:read', app._id, { write: false });
  const size = pageSize(args.first);
  const query = buildQuery(args.filter);
  const kind = 'connection:builds';
  const bound = { appId: app._id, ...query, from: boundDate(query.from), to: boundDate(query.to) };
  const after = resumeAfter(ctx, kind, bound, args.after);
  const docs = await ctx.repos.builds.page(app._id, query, size, after);
  return keysetConnection(ctx, { kind, bound, after, ...firstOfMore(docs, size), timeOf: (d) => d.createdAt }, () => ctx.repos.builds.count(app._id, query));
}

/**
 * The newest build of the app (of one platform when given), or null. The app's latest-build summary names it when it
 * is of that platform, so a page of apps loads those builds by id in one batch; otherwise (another platform, an app
 * whose summary is missing or empty) the app's builds are read as the summary cannot tell.
 */
export async function latestBuild(ctx: RequestContext, app: AppDoc, platform: Platform | null): Promise<BuildDoc | null> {
  await appAccess(ctx, 'builds:read', app._id, { write: false });
  const summary = app.latestBuild;
  if (summary && (!platform || platform === summary.platform)) {
    const build = await ctx.loaders.builds.load(summary.id);
    if (build?.appId === app._id) return build;
  }
  return ctx.repos.builds.latest(app._id, platform);
}

/** Scans of the app, newest first, of every engine or of one. */
export async function scansConnection(ctx: RequestContext, app: AppDoc, args: PageArgs & { engine?: ScanEngine | null }): Promise<ScanConnectionPage> {
  await appAccess(ctx, 'scans:read', app._id, { write: false });
  const size = pageSize(args.first);
  const engine = args.engine ?? null;
  const kind = 'connection:scans';
  const bound = { appId: app._id, engine };
  const after = resumeAfter(ctx, kind, bound, args.after);
  const docs = await ctx.repos.scans.page(app._id, engine, size, after);
  return keysetConnection(ctx, { kind, bound, after, ...firstOfMore(docs, size), timeOf: (d) => d.createdAt }, () => ctx.repos.scans.count(app._id, engine));
}

/** Security events of the app, newest first by first occurrence, with the occurrences merged into them since. */
export async function threatsConnection(ctx: RequestContext, app: AppDoc, args: PageArgs & { filter?: ThreatFilterInput | null }): Promise<ThreatConnectionPage> {
  await appAccess(ctx, 'threats:read', app._id, { write: false });
  const size = pageSize(args.first);
  const query = toQuery(args.filter);
  const kind = 'connection:threats';
  const bound = { appId: app._id, ...query, from: boundDate(query.from), to: boundDate(query.to) };
  const after = resumeAfter(ctx, kind, bound, args.after, FORMER_KINDS.threats);
  const docs = await ctx.repos.threats.list(app._id, query, size, after && { occurredAt: after.at, id: after.id });
  const items = await withMerged(ctx, app._id, docs.data);
  return keysetConnection(ctx, { kind, bound, after, items, hasMore: docs.hasMore, timeOf: (d) => d.occurredAt }, notCounted);
}

/** Trust rules of the app, newest first. */
export async function trustRulesConnection(ctx: RequestContext, app: AppDoc, args: PageArgs): Promise<OidcRuleConnectionPage> {
  await appAccess(ctx, 'rules:read', app._id, { write: false });
  const size = pageSize(args.first);
  const kind = 'connection:trust_rules';
  const bound = { appId: app._id };
  const after = resumeAfter(ctx, kind, bound, args.after);
  const docs = await ctx.repos.oidcRules.page(app._id, size, after);
  return keysetConnection(ctx, { kind, bound, after, ...firstOfMore(docs, size), timeOf: (d) => d.createdAt }, () => ctx.repos.oidcRules.count(app._id));
}

/** Staff: API keys of the app, newest first (documents hold a hash of the secret, never the secret; it is not a field). */
export async function keysConnection(ctx: RequestContext, app: AppDoc, args: PageArgs & { includeRevoked?: boolean | null }): Promise<ApiKeyConnectionPage> {
  requireStaff(ctx, { write: false });
  const size = pageSize(args.first);
  const includeRevoked = args.includeRevoked ?? true;
  const kind = 'connection:keys';
  const bound = { appId: app._id, includeRevoked };
  const after = resumeAfter(ctx, kind, bound, args.after);
  const docs = await ctx.repos.apiKeys.page(app._id, includeRevoked, size, after);
  return keysetConnection(ctx, { kind, bound, after, ...firstOfMore(docs, size), timeOf: (d) => d.createdAt }, () => ctx.repos.apiKeys.count(app._id, includeRevoked));
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
