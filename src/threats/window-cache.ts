import type { ThreatDoc } from '../data/threats-repo';

/** Per instance; each entry is a few hundred bytes. */
const MAX_KEYS = 50_000;

export interface KnownWindows {
  /** A generation known to exist (so every one below it exists too). */
  newest: number;
  /** The window with the latest end this instance saw for the key. */
  frontier: ThreatDoc;
}

/**
 * Windows this instance opened or read recently, per merge key (Deps.instance.windows), so a repeat within minutes
 * needs no read. Only facts that cannot become false are kept: a window's bounds never change and a generation never
 * disappears. Another instance may have opened newer generations meanwhile; then opening "newest + 1" collides on its
 * id and the merge falls back to reading, exactly as without the cache. Not shared state: losing it costs reads, never
 * correctness.
 */
export class WindowCache {
  private readonly entries = new Map<string, KnownWindows>();
  private readonly opening = new Map<string, Promise<void>>();

  /**
   * Marks keys whose first window a request of this instance is inserting right now, so a concurrent request of the
   * same instance waits for that insert (and then finds the window here) instead of colliding with it and reading it
   * back. Returns the function that ends the mark; call it after remember(), also on failure.
   */
  markOpening(keys: string[]): () => void {
    let done!: () => void;
    const inserted = new Promise<void>((resolve) => (done = resolve));
    for (const key of keys) if (!this.opening.has(key)) this.opening.set(key, inserted);
    return () => {
      for (const key of keys) if (this.opening.get(key) === inserted) this.opening.delete(key);
      done();
    };
  }

  isOpening(key: string): boolean {
    return this.opening.has(key);
  }

  /** Waits until no request of this instance is inserting the first window of `key`. */
  async settled(key: string): Promise<void> {
    await this.opening.get(key);
  }

  get(key: string): KnownWindows | undefined {
    return this.entries.get(key);
  }

  remember(key: string, newest: number, windows: Iterable<ThreatDoc>): void {
    let frontier = this.entries.get(key)?.frontier;
    for (const w of windows) if (!frontier || w.windowEnd > frontier.windowEnd) frontier = w;
    if (!frontier) return;
    const known = Math.max(newest, this.entries.get(key)?.newest ?? -1);
    this.entries.delete(key); // re-insert: the Map's order is the eviction order
    this.entries.set(key, { newest: known, frontier });
    if (this.entries.size > MAX_KEYS) this.entries.delete(this.entries.keys().next().value as string);
  }
}
