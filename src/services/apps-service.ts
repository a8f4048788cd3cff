import type { RequestContext } from './context';
import { requireStaff } from '../auth/authorize';
import { PLANS, type AppDoc, type Plan } from '../data/apps-repo';
import { validationFailed } from '../core/errors';
import { newId } from '../core/ids';
import type { Deps } from '../core/deps';
import { actorOf, recordAction } from './audit-service';

export interface CreateAppInput {
  name: string;
  plan: string;
  org?: string | null;
}

/** Operators (CLI) and admin staff create apps. */
export async function createApp(deps: Deps, input: CreateAppInput, actor = 'operator'): Promise<AppDoc> {
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
  await recordAction(deps, { actor, action: 'app.created', resource: `app:${app._id}`, appId: app._id, details: { plan: app.plan } });
  return app;
}

export async function createAppAsStaff(ctx: RequestContext, input: CreateAppInput): Promise<AppDoc> {
  requireStaff(ctx, { write: true });
  return createApp(ctx.deps, input, actorOf(ctx));
}

export async function getApp(ctx: RequestContext, id: string): Promise<AppDoc | null> {
  requireStaff(ctx, { write: false });
  return ctx.repos.apps.findById(id);
}

export async function listApps(ctx: RequestContext, limit: number): Promise<AppDoc[]> {
  requireStaff(ctx, { write: false });
  return ctx.repos.apps.list(Math.min(Math.max(limit, 1), 200));
}
