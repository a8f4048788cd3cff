/**
 * Values read from the database, remembered by this instance for a few seconds: what the attestation caches share.
 * Real time, not the service clock: this only paces reads, nothing expires by it. At `max` keys it starts again
 * rather than growing without bound.
 */
export class RecentReads<V> {
  private readonly values = new Map<string, { until: number; value: V }>();

  constructor(
    private readonly ttlMs: number,
    private readonly max: number,
    /** Whether a value read is remembered (a cache of what was found does not remember a miss). */
    private readonly keep: (value: V) => boolean = () => true,
  ) {}

  async get(key: string, read: () => Promise<V>): Promise<V> {
    const now = performance.now();
    const hit = this.values.get(key);
    if (hit && hit.until > now) return hit.value;
    const value = await read();
    if (!this.keep(value)) {
      this.values.delete(key);
      return value;
    }
    if (this.values.size >= this.max) this.values.clear();
    this.values.set(key, { until: now + this.ttlMs, value });
    return value;
  }

  forget(key: string): void {
    this.values.delete(key);
  }
}
