/**
 * Claims a provider's model does not know: a provider that starts sending a new claim may be changing what its
 * tokens mean, so the claim is logged (its name only, never its value) once per provider, claim and day, and never
 * trusted: no rule reads it and nothing records it. Per instance, bounded.
 */
import type { Logger } from '../core/logger';
import type { ProviderModel } from './providers/model';

/** The registered claims of RFC 7519 and the OIDC core claims every provider may send. */
const REGISTERED = ['iss', 'sub', 'aud', 'exp', 'nbf', 'iat', 'jti'];
/**
 * Claim names remembered per provider and day at most: a flood of invented names (Buildkite's `--claim agent_tag:*`
 * lets any organisation add claims) logs this many, then nothing, for that provider alone.
 */
const MAX_REMEMBERED = 256;
const MAX_NAME_SHOWN = 64;

export class ClaimDrift {
  private day = '';
  private readonly seen = new Map<string, Set<string>>();

  /** Logs each claim of the payload the model does not know, the first time today on this instance. */
  observe(model: ProviderModel, payload: Readonly<Record<string, unknown>>, now: Date, logger: Logger): void {
    const today = now.toISOString().slice(0, 10);
    if (today !== this.day) {
      this.day = today;
      this.seen.clear();
    }
    let seen = this.seen.get(model.id);
    if (!seen) this.seen.set(model.id, (seen = new Set()));
    for (const name of Object.keys(payload)) {
      if (REGISTERED.includes(name) || model.requiredClaims.includes(name) || model.optionalClaims.includes(name) || model.ignoredClaims.includes(name)) continue;
      if (seen.has(name) || seen.size >= MAX_REMEMBERED) continue;
      seen.add(name);
      // The name is the issuer's text: cut and stripped of control characters before it reaches a log line.
      const claim = name.slice(0, MAX_NAME_SHOWN).replace(/[\x00-\x1f\x7f]/g, '?');
      logger.warn({ provider: model.id, claim }, 'oidc claim drift: the provider sent a claim its model does not know (ignored)');
    }
  }
}
