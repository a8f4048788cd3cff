import type { RequestContext } from './context';
import { DomainError } from '../core/errors';
import { staffExpiry, type StaffRole } from '../data/staff-repo';

export interface StaffIdentityView {
  id: string;
  role: StaffRole;
  name: string | null;
  expiresAt: Date;
}

/** The staff caller's own token record (never its secret hash); app credentials have `whoami` instead. */
export async function staffWhoami(ctx: RequestContext): Promise<StaffIdentityView> {
  const p = ctx.principal;
  if (p.kind !== 'staff') throw new DomainError(p.kind === 'anonymous' ? 'unauthorized' : 'insufficient_scope', 'Staff only.');
  const staff = await ctx.repos.staff.findById(p.staffId);
  // The gate authenticated this token moments ago; a record gone since is a token no longer valid.
  if (!staff) throw new DomainError('unauthorized', 'A valid staff token is required.');
  return { id: staff._id, role: staff.role, name: staff.name, expiresAt: staffExpiry(staff) };
}
