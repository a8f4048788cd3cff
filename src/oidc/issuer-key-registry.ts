import type { Clock } from '../core/clock';
import { IssuerKeys } from './issuer-keys';

/** Issuers whose keys an instance keeps at once; the least recently used is forgotten (and refetched if used again). */
export const MAX_CACHED_ISSUERS = 256;

/**
 * The key sets of every issuer a token may be verified against, each an IssuerKeys (discovery, cache, cooldown,
 * bounds and timeouts as for GitHub's), so a kid is only ever looked up among its own issuer's keys. The caller asks
 * only for issuers a rule of the app names and the operator allows (issuers.ts): the registry fetches whatever it is
 * asked for, so it must never be asked for a token's unverified `iss` alone.
 */
export class IssuerKeyRegistry {
  private readonly sets = new Map<string, IssuerKeys>();
  /** The operator's issuers (GitHub's, each provider's public one, OIDC_ALLOWED_ISSUERS): never forgotten, so no
   * tenant naming many per-organisation issuers can push them out and reset their refetch cooldowns. */
  private readonly permanent = new Map<string, IssuerKeys>();

  constructor(
    private readonly clock: Clock,
    permanentIssuers: readonly string[] = [],
  ) {
    for (const issuer of permanentIssuers) this.permanent.set(issuer, new IssuerKeys(issuer, clock));
  }

  keysOf(issuer: string): IssuerKeys {
    const kept = this.permanent.get(issuer);
    if (kept) return kept;
    let keys = this.sets.get(issuer);
    if (keys) {
      this.sets.delete(issuer); // re-inserted last: Map order is the recency order
    } else {
      keys = new IssuerKeys(issuer, this.clock);
      if (this.sets.size >= MAX_CACHED_ISSUERS) this.sets.delete(this.sets.keys().next().value!);
    }
    this.sets.set(issuer, keys);
    return keys;
  }

  /** Issuers held in the recency-bounded part (the permanent ones aside). */
  get size(): number {
    return this.sets.size;
  }
}
