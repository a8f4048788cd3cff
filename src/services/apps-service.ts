import type { RequestContext } from './context';
import { requireStaff } from '../auth/authorize';
import { PLANS, type AppDoc, type AppQuery, type Plan } from '../data/apps-repo';
import { validationFailed } from '../core/errors';
import { newId } from '../core/ids';
import { recordAction } from './audit-service';
import { firstOfMore, keysetConnection, pageSize, resumeAfter, type AppConnectionPage, type PageArgs } from './pages';

export interface CreateAppInput {
  name: string;
  plan: string;
  org?: string | null;
}

/** Operators (CLI) and admin staff create apps. */
export async function createApp(ctx: RequestContext, input: CreateAppInput): Promise<AppDoc> {
  requireStaff(ctx, { write: true });
  const deps = ctx.deps;
  const name = input.name.trim();
  const errors = [];
  if (name.length < 1 || name.length > 100) errors.push({ pointer: '/name', message: 'must be 1 to 100 characters' });
  if (!(PLANS as readonly string[]).includes(input.plan)) errors.push({ pointer: '/plan', message: `must be one of ${PLANS.join(', ')}` });
  if (errors.length) throw validationFailed(errors);
  const app: AppDoc = {
    _id: newId('app'),
    name,
    plan: input.plan as Plan,
    org: input.org?.trim() || 'default',
    createdAt: deps.clock.now(),
    latestBuild: null,
  };
  await deps.repos.apps.insert(app);
  await recordAction(ctx, { action: 'app.created', resource: `app:${app._id}`, appId: app._id, details: { plan: app.plan } });
  return app;
}

/**
 * Staff: any app. An app credential: its own app (null for any other, as for an unknown id), so REST reads an app's
 * lists through App's connections; each of App's fields then checks its own scope. /graphql serves staff only.
 */
export async function getApp(ctx: RequestContext, id: string): Promise<AppDoc | null> {
  const p = ctx.principal;
  if (p.kind === 'api_key' || p.kind === 'oidc') return p.appId === id ? ctx.loaders.apps.load(id) : null;
  requireStaff(ctx, { write: false });
  return ctx.repos.apps.findById(id);
}

export async function listApps(ctx: RequestContext, limit: number): Promise<AppDoc[]> {
  requireStaff(ctx, { write: false });
  return ctx.repos.apps.list(Math.min(Math.max(limit, 1), 200));
}

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
