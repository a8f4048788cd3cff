import type { RequestContext } from './context';
import { DomainError } from '../core/errors';
import type { Plan } from '../data/apps-repo';

export interface WhoamiView {
  appId: string;
  plan: Plan;
  scopes: string[];
  auth: 'api_key' | 'oidc';
  expiresAt: Date | null;
}

/** The caller's own identity; needs no scope. The credential's secret is never part of it. */
export function whoami(ctx: RequestContext): WhoamiView {
  const p = ctx.principal;
  switch (p.kind) {
    case 'api_key':
      return { appId: p.appId, plan: p.plan, scopes: p.scopes, auth: 'api_key', expiresAt: p.expiresAt };
    case 'oidc':
      return { appId: p.appId, plan: p.plan, scopes: p.scopes, auth: 'oidc', expiresAt: p.expiresAt };
    case 'staff':
    case 'operator':
      throw new DomainError('insufficient_scope', 'Staff have no app identity; whoami is for app credentials.');
    case 'anonymous':
      throw new DomainError('unauthorized', 'A valid credential is required.');
  }
}
