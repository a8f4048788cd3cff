import { RecentReads } from './recent-reads';

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
  private readonly facts = new RecentReads<unknown>(FOUND_MS, MAX_FACTS, (value) => value !== null);

  found<T>(key: string, read: () => Promise<T | null>): Promise<T | null> {
    return this.facts.get(key, read) as Promise<T | null>;
  }
}
