/**
 * How long this instance remembers what a verification found about an app's package: its recorded signer, and the
 * registered build of a versionCode. Every Android verification needs both (three database reads of five); they
 * change when a release is scanned or an operator re-keys, which a device sees within FOUND_MS.
 */
const FOUND_MS = 5_000;
/** Facts remembered at most: beyond, the cache starts again instead of growing without bound. */
const MAX_FACTS = 10_000;

/**
 * Facts found, remembered for a few seconds by this instance (Deps.instance.attestFacts). Only what was found is
 * remembered: a package with no recorded signer or a versionCode with no build is read again on the next
 * verification, so the first release scan or upload is seen at once; a change to something found (a re-key, a newer
 * build of the same versionCode) within FOUND_MS.
 */
export class AttestFactsCache {
  private readonly facts = new Map<string, { until: number; value: unknown }>();

  async found<T>(key: string, read: () => Promise<T | null>): Promise<T | null> {
    // Real time, not the service clock: this only paces reads, nothing expires by it.
    const now = performance.now();
    const hit = this.facts.get(key);
    if (hit && hit.until > now) return hit.value as T;
    const value = await read();
    if (value === null) {
      this.facts.delete(key);
      return null;
    }
    if (this.facts.size >= MAX_FACTS) this.facts.clear();
    this.facts.set(key, { until: now + FOUND_MS, value });
    return value;
  }
}
