import { DomainError } from '../core/errors';
import type { UploadLocksRepo } from '../data/upload-locks-repo';

/** What a refused upload is asked to wait: long enough for a small upload to finish, short for a CI retry loop. */
export const UPLOAD_BUDGET_RETRY_AFTER_S = 5;

/**
 * Uploads in flight on this instance. Each one holds buffers (three 5 MiB parts on S3) and a socket: this bounds the
 * memory one instance gives to uploads, whoever sends them. Per instance by nature, so kept in memory:
 * Deps.instance.uploads.
 */
export class InstanceUploads {
  private active = 0;
  constructor(readonly max: number) {}
  tryAcquire(): boolean {
    if (this.active >= this.max) return false;
    this.active += 1;
    return true;
  }
  release(): void {
    this.active = Math.max(0, this.active - 1);
  }
  get inFlight(): number {
    return this.active;
  }
}

/** The slots of an app are upload locks named `slot:<app>:<n>`: build ids (`bld_...`) never take that shape. */
const slotId = (appId: string, n: number) => `slot:${appId}:${n}`;

/** What the budget uses of the process's dependencies: a slice, so this file does not import Deps (which imports it). */
export interface UploadBudgetDeps {
  repos: { uploadLocks: Pick<UploadLocksRepo, 'acquire' | 'renew' | 'release'> };
  config: { uploadsPerApp: number };
  instance: { uploads: InstanceUploads };
}

export interface UploadBudget {
  /** Extends the app slot's lease with the upload lock's (a crashed instance frees its slot when the lease ends). */
  renew(now: Date, leaseMs: number): Promise<boolean>;
  release(): Promise<void>;
}

/**
 * Takes one of the app's UPLOADS_PER_APP slots, shared by every instance (else 409 too_many_uploads), then one of this
 * instance's upload places (else 503), both refusals with Retry-After. The app's slot comes first, so one app's flood
 * holds at most its own slots' worth of instance places while it is being refused: it cannot take the instance from
 * the other apps. Slots are taken like upload locks: a unique id decides between concurrent takers, and an ended lease
 * is taken over by one conditional update.
 */
export async function acquireUploadBudget(deps: UploadBudgetDeps, appId: string, holder: string, now: Date, leaseMs: number): Promise<UploadBudget> {
  const locks = deps.repos.uploadLocks;
  let slot: string | null = null;
  for (let n = 0; n < deps.config.uploadsPerApp && !slot; n++) {
    if (await locks.acquire(slotId(appId, n), holder, now, leaseMs)) slot = slotId(appId, n);
  }
  if (!slot) {
    throw new DomainError('too_many_uploads', `This app has ${deps.config.uploadsPerApp} uploads in flight, the most it may; retry when one ends.`, {
      retryAfter: UPLOAD_BUDGET_RETRY_AFTER_S,
    });
  }
  const id = slot;
  const instance = deps.instance.uploads;
  if (!instance.tryAcquire()) {
    await locks.release(id, holder);
    throw new DomainError('unavailable', 'This instance has as many uploads in flight as it takes; retry shortly.', { retryAfter: UPLOAD_BUDGET_RETRY_AFTER_S });
  }
  return {
    renew: (at, lease) => locks.renew(id, holder, at, lease),
    release: async () => {
      instance.release();
      await locks.release(id, holder);
    },
  };
}
