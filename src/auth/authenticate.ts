import type { Deps } from '../core/deps';
import { parseBearer } from '../crypto/credentials';
import { secretMatches } from '../crypto/secrets';
import { staffExpiry } from '../data/staff-repo';
import { isScope } from './scopes';
import type { Principal } from './principal';
import { verifyAccessToken } from './access-tokens';

export type AuthResult = { ok: true; principal: Principal } | { ok: false };

/**
 * Resolves the Authorization header of a /v1 request. Every failure (malformed, unknown, wrong secret, revoked,
 * expired, wrong kind) is the same `{ ok: false }`, so a caller learns nothing about which check failed.
 * Staff tokens are for /graphql only and fail here too.
 */
export async function authenticateApiRequest(deps: Deps, header: string | undefined): Promise<AuthResult> {
  const credential = parseBearer(header);
  if (!credential) return { ok: false };
  if (credential.kind === 'jwt') {
    const principal = await verifyAccessToken(deps, credential.token);
    return principal ? { ok: true, principal } : { ok: false };
  }
  if (credential.kind !== 'api_key') return { ok: false };

  const key = await deps.repos.apiKeys.findById(credential.id);
  // The secret is compared even when the key is unusable, so every refusal costs the same.
  const secretOk = secretMatches(credential.secret, key?.secretHash ?? '0'.repeat(64));
  const now = deps.clock.now();
  if (!key || !secretOk || key.mode !== credential.mode || key.revokedAt || (key.expiresAt && key.expiresAt <= now)) {
    return { ok: false };
  }
  const app = await deps.instance.apps.of(key.appId, (id) => deps.repos.apps.findById(id));
  if (!app) return { ok: false };
  return {
    ok: true,
    principal: {
      kind: 'api_key',
      appId: app._id,
      org: app.org,
      plan: app.plan,
      keyId: key._id,
      mode: key.mode,
      scopes: key.scopes.filter(isScope),
      expiresAt: key.expiresAt,
    },
  };
}

/** Last use of a staff token is recorded at most this often (one write a minute, not one per request). */
const STAFF_TOUCH_MS = 60_000;

/**
 * Resolves the Authorization header of a /graphql request: staff tokens only. The record is read on every request,
 * so a revocation is effective on the next one, on every instance; an expired token fails like an unknown one.
 */
export async function authenticateStaff(deps: Deps, header: string | undefined): Promise<Principal | null> {
  const credential = parseBearer(header);
  if (!credential || credential.kind !== 'staff') return null;
  const staff = await deps.repos.staff.findById(credential.id);
  const secretOk = secretMatches(credential.secret, staff?.secretHash ?? '0'.repeat(64));
  const now = deps.clock.now();
  if (!staff || !secretOk || staff.revokedAt || staffExpiry(staff) <= now) return null;
  const lastUsed = staff.lastUsedAt?.getTime() ?? 0;
  if (now.getTime() - lastUsed >= STAFF_TOUCH_MS) {
    // Not awaited: recording a use must not slow or fail the request it records.
    deps.repos.staff.touch(staff._id, now, STAFF_TOUCH_MS).catch((err) => deps.logger.warn({ err, staffId: staff._id }, 'recording staff token use failed'));
  }
  return { kind: 'staff', staffId: staff._id, role: staff.role };
}
