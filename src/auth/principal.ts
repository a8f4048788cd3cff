import type { Plan } from '../data/apps-repo';
import type { StaffRole } from '../data/staff-repo';
import type { Scope } from './scopes';

/** Who is calling. Built once per request by the auth service, read by every service. */
export type Principal = ApiKeyPrincipal | AccessTokenPrincipal | StaffPrincipal | OperatorPrincipal | AnonymousPrincipal;

export interface ApiKeyPrincipal {
  kind: 'api_key';
  appId: string;
  org: string;
  plan: Plan;
  keyId: string;
  mode: 'live' | 'test';
  scopes: Scope[];
  expiresAt: Date | null;
}

export interface AccessTokenPrincipal {
  kind: 'oidc';
  appId: string;
  org: string;
  plan: Plan;
  ruleIds: string[]; // every rule that produced the token; all must still exist on each use
  bucketRuleId: string; // the earliest-created matching rule: its rate-limit bucket is shared by all its jobs
  scopes: Scope[];
  expiresAt: Date;
  /** The token's jti: finds the verified job claims recorded at the exchange (build provenance). */
  tokenId: string;
  /** The CI job's OIDC subject the token was minted for (its `sub`): who the access log names. */
  subject?: string;
}

export interface StaffPrincipal {
  kind: 'staff';
  staffId: string;
  role: StaffRole;
}

/**
 * Whoever runs the service itself: the command line, jobs and hooks outside any request. An operator may do what an
 * admin may, and manage staff tokens, which no request can. `user` is the operating-system user, as far as known.
 */
export interface OperatorPrincipal {
  kind: 'operator';
  user: string | null;
}

export interface AnonymousPrincipal {
  kind: 'anonymous';
}

export type AppPrincipal = ApiKeyPrincipal | AccessTokenPrincipal;

export function isAppPrincipal(p: Principal): p is AppPrincipal {
  return p.kind === 'api_key' || p.kind === 'oidc';
}

export const ANONYMOUS: AnonymousPrincipal = { kind: 'anonymous' };
