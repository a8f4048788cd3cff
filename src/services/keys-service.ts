import type { RequestContext } from './context';
import { requireOperator, requireStaff } from '../auth/authorize';
import { isScope, SCOPES } from '../auth/scopes';
import type { ApiKeyDoc } from '../data/api-keys-repo';
import { formatApiKey, formatStaffToken } from '../crypto/credentials';
import { newSecret, sha256Hex } from '../crypto/secrets';
import { DomainError, notFound, validationFailed } from '../core/errors';
import { randomAlnum } from '../core/ids';
import { STAFF_DEFAULT_TTL_MS, staffExpiry, type StaffDoc, type StaffRole } from '../data/staff-repo';
import { recordAction } from './audit-service';
import type { AppDoc } from '../data/apps-repo';
import { firstOfMore, keysetConnection, pageSize, resumeAfter, type ApiKeyConnectionPage, type PageArgs } from './pages';

export interface CreateKeyInput {
  appId: string;
  scopes: string[];
  mode: 'live' | 'test';
  name?: string | null;
  /** Builds registered with the key are release builds (docs/contract.md, "Release builds"). */
  releaseBuilds?: boolean | null;
}

/** Creates an API key. The full key (with its secret) is returned here once; only a hash of the secret is kept. */
/** Operators (CLI) and admin staff create API keys. */
export async function createApiKey(ctx: RequestContext, input: CreateKeyInput): Promise<{ doc: ApiKeyDoc; key: string }> {
  requireStaff(ctx, { write: true });
  const deps = ctx.deps;
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
    releaseBuilds: input.releaseBuilds ?? false,
    createdAt: deps.clock.now(),
    expiresAt: null,
    revokedAt: null,
  };
  await deps.repos.apiKeys.insert(doc);
  await recordAction(ctx, { action: 'api_key.created', resource: `api_key:${id}`, appId: app._id, details: { scopes: doc.scopes.join(' '), mode: doc.mode, releaseBuilds: doc.releaseBuilds ?? false } });
  return { doc, key: formatApiKey(input.mode, id, secret) };
}

/** Revokes a key: the next request that presents it is refused, on every instance (keys are never cached). */
/** Operators (CLI) and admin staff revoke API keys. */
export async function revokeApiKey(ctx: RequestContext, id: string): Promise<ApiKeyDoc> {
  requireStaff(ctx, { write: true });
  const deps = ctx.deps;
  const existing = await deps.repos.apiKeys.findById(id);
  if (!existing) throw notFound('API key');
  if (!existing.revokedAt) {
    await deps.repos.apiKeys.revoke(id, deps.clock.now());
    await recordAction(ctx, { action: 'api_key.revoked', resource: `api_key:${id}`, appId: existing.appId });
  }
  const doc = await deps.repos.apiKeys.findById(id);
  if (!doc) throw notFound('API key');
  return doc;
}

export interface CreateStaffOptions {
  /** Lifetime of the token; default 12 hours. */
  ttlMs?: number;
}

/** Longest lifetime a staff token may be given: a token is a person's working credential, not a service's. */
export const STAFF_MAX_TTL_MS = 90 * 24 * 3600_000;

export async function createStaff(
  ctx: RequestContext,
  role: string,
  name?: string | null,
  options: CreateStaffOptions = {},
): Promise<{ id: string; token: string; expiresAt: Date }> {
  requireOperator(ctx);
  const deps = ctx.deps;
  if (role !== 'support' && role !== 'admin') {
    throw new DomainError('validation_failed', 'role must be support or admin', { errors: [{ pointer: '/role', message: 'must be support or admin' }] });
  }
  const ttlMs = options.ttlMs ?? STAFF_DEFAULT_TTL_MS;
  if (!Number.isInteger(ttlMs) || ttlMs < 1000 || ttlMs > STAFF_MAX_TTL_MS) {
    throw validationFailed([{ pointer: '/ttl', message: 'must be from 1 second to 90 days' }]);
  }
  const id = randomAlnum(20);
  const secret = newSecret();
  const createdAt = deps.clock.now();
  const expiresAt = new Date(createdAt.getTime() + ttlMs);
  await deps.repos.staff.insert({
    _id: id,
    role: role as StaffRole,
    name: name?.trim() || null,
    secretHash: sha256Hex(secret),
    createdAt,
    expiresAt,
    revokedAt: null,
    lastUsedAt: null,
  });
  await recordAction(ctx, { action: 'staff.created', resource: `staff:${id}`, details: { role, expiresAt: expiresAt.toISOString() } });
  return { id, token: formatStaffToken(id, secret), expiresAt };
}

/** What `staff list` shows of a token: never its secret or hash. */
export function staffView(doc: StaffDoc) {
  return {
    id: doc._id,
    role: doc.role,
    name: doc.name,
    createdAt: doc.createdAt,
    expiresAt: staffExpiry(doc),
    revokedAt: doc.revokedAt,
    lastUsedAt: doc.lastUsedAt ?? null,
  };
}

export async function listStaff(ctx: RequestContext) {
  requireOperator(ctx);
  return (await ctx.repos.staff.list()).map(staffView);
}

/** Revokes a staff token: the next request that presents it is refused, on every instance (never cached). */
export async function revokeStaff(ctx: RequestContext, id: string) {
  requireOperator(ctx);
  const deps = ctx.deps;
  const existing = await deps.repos.staff.findById(id);
  if (!existing) throw notFound('Staff token');
  const doc = existing.revokedAt ? existing : await deps.repos.staff.revoke(id, deps.clock.now());
  if (!doc) throw notFound('Staff token');
  if (!existing.revokedAt) await recordAction(ctx, { action: 'staff.revoked', resource: `staff:${id}` });
  return staffView(doc);
}



export async function listApiKeys(ctx: RequestContext, appId: string): Promise<ApiKeyDoc[]> {
  requireStaff(ctx, { write: false });
  return ctx.repos.apiKeys.listForApp(appId);
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
