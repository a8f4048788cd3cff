import type { RateLimiter } from '../rate-limit/rate-limiter';

/**
 * Upload URLs that fail their check, per client address and minute, before that address's next ones are checked
 * without a database read (SigningKeys.signatureHolds: the signature against public keys read at most once a second):
 * the upload route carries no credential and no rate limit (docs/contract.md, "Rate limits"), and every token fully
 * checked costs a signing-key lookup. A token whose signature holds is still honoured: many CI jobs may share one
 * egress address with a client sending forged URLs. A CI job makes a few uploads a minute, with URLs that pass.
 */
export const FAILED_UPLOAD_TOKENS_PER_MINUTE = 30;

/**
 * Addresses over that count are remembered on this instance until their window ends, so their forged tokens cost no
 * database read at all; the count itself is shared by every instance (the rate limiter's store). One per instance:
 * Deps.instance.failedUploadTokens.
 */
export class FailedUploadTokens {
  private readonly blockedUntil = new Map<string, number>();
  constructor(private readonly limiter: RateLimiter) {}

  /** True while this address's tokens are checked without a database read. */
  blocked(address: string): boolean {
    const until = this.blockedUntil.get(address);
    if (until === undefined) return false;
    if (until > performance.now()) return true;
    this.blockedUntil.delete(address);
    return false;
  }

  /** Counts one failed check of this address's; at the limit, refuses the address until its window ends. */
  async record(address: string): Promise<void> {
    const decision = await this.limiter.consume(`upload-token:${address}`, FAILED_UPLOAD_TOKENS_PER_MINUTE);
    if (decision.allowed && decision.remaining > 0) return;
    if (this.blockedUntil.size > 10_000) this.blockedUntil.clear(); // bounded: at worst an address is counted again
    this.blockedUntil.set(address, performance.now() + Math.max(1, decision.resetSeconds) * 1000);
  }
}
