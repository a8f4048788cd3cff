import { DomainError } from '../core/errors';
import type { RequestContext } from '../services/context';
import type { Scope } from './scopes';

/**
 * Whose data a caller may touch. An app credential sees its own app only; staff see every app
 * (support reads, admin reads and writes). Services call this first, so REST and GraphQL get the same answer.
 */
export type Access = { kind: 'app'; appId: string } | { kind: 'staff' };

export function authorize(ctx: RequestContext, scope: Scope, opts: { write: boolean }): Access {
  const p = ctx.principal;
  switch (p.kind) {
    case 'anonymous':
      throw new DomainError('unauthorized', 'A valid credential is required.');
    case 'staff':
      if (opts.write && p.role !== 'admin') throw new DomainError('insufficient_scope', 'This operation needs the admin role.');
      return { kind: 'staff' };
    case 'operator':
      return { kind: 'staff' };
    case 'api_key':
    case 'oidc':
      if (!p.scopes.includes(scope)) throw new DomainError('insufficient_scope', `This operation needs the ${scope} scope.`);
      return { kind: 'app', appId: p.appId };
  }
}

/**
 * The one authorization of an operation addressed to an app by id: the caller holds `scope` (staff: any app, writes
 * for admins only) and the app is theirs and exists. Another app's id is answered exactly like an unknown one (404),
 * so ids of other tenants cannot be probed. An app credential's app is the one authentication found it for (apps are
 * never deleted), so only an id named by staff is looked up, through the request's loader.
 */
export async function appAccess(ctx: RequestContext, scope: Scope, appId: string, opts: { write: boolean }): Promise<void> {
  const access = authorize(ctx, scope, opts);
  if (access.kind === 'app' ? access.appId !== appId : !(await ctx.loaders.apps.load(appId))) {
    throw new DomainError('not_found', 'App not found.');
  }
}

/** The app a resource lookup is restricted to: null means any app (staff only). */
export function appFilter(access: Access): string | null {
  return access.kind === 'app' ? access.appId : null;
}

/** Staff (writes: admins) or the operator. */
export function requireStaff(ctx: RequestContext, opts: { write: boolean }): void {
  const p = ctx.principal;
  if (p.kind === 'operator') return;
  if (p.kind !== 'staff') throw new DomainError(p.kind === 'anonymous' ? 'unauthorized' : 'insufficient_scope', 'Staff only.');
  if (opts.write && p.role !== 'admin') throw new DomainError('insufficient_scope', 'This operation needs the admin role.');
}

/** The operator only: staff tokens are minted and revoked at the command line, never over the API. */
export function requireOperator(ctx: RequestContext): void {
  const p = ctx.principal;
  if (p.kind !== 'operator') throw new DomainError(p.kind === 'anonymous' ? 'unauthorized' : 'insufficient_scope', 'Only the operator manages staff tokens.');
}
