import type { RequestContext } from '../context';
import type { Deps } from '../deps';
import { requireStaff } from '../auth/authorize';
import { isScope, SCOPES } from '../auth/scopes';
import type { ApiKeyDoc } from '../data/api-keys-repo';
import { formatApiKey, formatStaffToken } from '../crypto/credentials';
import { newSecret, sha256Hex } from '../crypto/secrets';
import { DomainError, notFound, validationFailed } from '../errors';
import { randomAlnum } from '../ids';
import type { StaffRole } from '../data/staff-repo';

export interface CreateKeyInput {
  appId: string;
  scopes: string[];
  mode: 'live' | 'test';
  name?: string | null;
}

/** Creates an API key. The full key (with its secret) is returned here once; only a hash of the secret is kept. */
export async function createApiKey(deps: Deps, input: CreateKeyInput): Promise<{ doc: ApiKeyDoc; key: string }> {
  const unknown = input.scopes.filter((s) => !isScope(s));
  const errors = [];
  if (input.scopes.length === 0) errors.push({ pointer: '/scopes', message: 'at least one scope is required' });
  if (unknown.length) errors.push({ pointer: '/scopes', message: `unknown scopes ${unknown.join(', ')}; known: ${SCOPES.join(', ')}` });
  if (errors.length) throw validationFailed(errors);
  const app = await deps.repos.apps.findById(input.appId);
  if (!app) throw notFound('App');

  const id = randomAlnum(20);
  const secret = newSecret();
  const doc: ApiKeyDoc = {
    _id: id,
    appId: app._id,
    name: input.name?.trim() || null,
    scopes: [...new Set(input.scopes)],
    mode: input.mode,
    secretHash: sha256Hex(secret),
    createdAt: deps.clock.now(),
    expiresAt: null,
    revokedAt: null,
  };
  await deps.repos.apiKeys.insert(doc);
  return { doc, key: formatApiKey(input.mode, id, secret) };
}

/** Revokes a key: the next request that presents it is refused, on every instance (keys are never cached). */
export async function revokeApiKey(deps: Deps, id: string): Promise<ApiKeyDoc> {
  const existing = await deps.repos.apiKeys.findById(id);
  if (!existing) throw notFound('API key');
  if (!existing.revokedAt) await deps.repos.apiKeys.revoke(id, deps.clock.now());
  const doc = await deps.repos.apiKeys.findById(id);
  if (!doc) throw notFound('API key');
  return doc;
}

export async function createStaff(deps: Deps, role: string, name?: string | null): Promise<{ id: string; token: string }> {
  if (role !== 'support' && role !== 'admin') {
    throw new DomainError('validation_failed', 'role must be support or admin', { errors: [{ pointer: '/role', message: 'must be support or admin' }] });
  }
  const id = randomAlnum(20);
  const secret = newSecret();
  await deps.repos.staff.insert({
    _id: id,
    role: role as StaffRole,
    name: name?.trim() || null,
    secretHash: sha256Hex(secret),
    createdAt: deps.clock.now(),
    revokedAt: null,
  });
  return { id, token: formatStaffToken(id, secret) };
}

export async function createApiKeyAsStaff(ctx: RequestContext, input: CreateKeyInput) {
  requireStaff(ctx, { write: true });
  return createApiKey(ctx.deps, input);
}

export async function revokeApiKeyAsStaff(ctx: RequestContext, id: string) {
  requireStaff(ctx, { write: true });
  return revokeApiKey(ctx.deps, id);
}

export async function listApiKeys(ctx: RequestContext, appId: string): Promise<ApiKeyDoc[]> {
  requireStaff(ctx, { write: false });
  return ctx.repos.apiKeys.listForApp(appId);
}
