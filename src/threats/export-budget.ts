import { DomainError } from '../core/errors';

/** Exports of one app running at once on an instance: a SIEM back-fill needs one; a second covers a retry. */
export const EXPORTS_PER_APP = 2;
/** Exports running at once on an instance, every app's: each holds a page of up to 500 threats and a socket. */
export const EXPORTS_PER_INSTANCE = 16;
/** What a refused export is asked to wait. */
export const EXPORT_RETRY_AFTER_S = 10;

/**
 * The exports running on this instance, per app. Per instance by nature (what it bounds is this process's memory and
 * sockets), so kept in memory (Deps.instance.exports). The app's count is checked first, so one app's flood is
 * refused at its own limit and holds at most EXPORTS_PER_APP of the instance's places.
 */
export class RunningExports {
  private total = 0;
  private readonly perApp = new Map<string, number>();

  /** Takes a place for an export of the app, or refuses (429 for the app's limit, 503 for the instance's). */
  acquire(appId: string): () => void {
    const ofApp = this.perApp.get(appId) ?? 0;
    if (ofApp >= EXPORTS_PER_APP) {
      throw new DomainError('rate_limited', `This app has ${EXPORTS_PER_APP} exports running, the most it may; retry when one ends.`, { retryAfter: EXPORT_RETRY_AFTER_S });
    }
    if (this.total >= EXPORTS_PER_INSTANCE) {
      throw new DomainError('unavailable', 'This instance has as many exports running as it takes; retry shortly.', { retryAfter: EXPORT_RETRY_AFTER_S });
    }
    this.total += 1;
    this.perApp.set(appId, ofApp + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total -= 1;
      const left = (this.perApp.get(appId) ?? 1) - 1;
      if (left > 0) this.perApp.set(appId, left);
      else this.perApp.delete(appId);
    };
  }
}
