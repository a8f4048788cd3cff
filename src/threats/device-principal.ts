import type { RequestContext } from '../services/context';
import type { ApiKeyPrincipal } from '../auth/principal';
import type { Scope } from '../auth/scopes';
import { DomainError } from '../core/errors';

/**
 * Device operations (events, attestation) accept API keys only. An access token never carries a device scope; if one
 * somehow did, it is still refused here (403), and so is staff: a device call always names the key's own app.
 */
export function requireDeviceKey(ctx: RequestContext, scope: Scope): ApiKeyPrincipal {
  const p = ctx.principal;
  if (p.kind === 'anonymous') throw new DomainError('unauthorized', 'A valid credential is required.');
  if (p.kind !== 'api_key') throw new DomainError('insufficient_scope', `This operation needs an API key with the ${scope} scope.`);
  if (!p.scopes.includes(scope)) throw new DomainError('insufficient_scope', `This operation needs the ${scope} scope.`);
  return p;
}
