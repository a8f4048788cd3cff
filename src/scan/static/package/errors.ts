import type { LimitName } from './limits';

/** Thrown inside the analyser when a package or one of its entries cannot be read; never escapes analyzePackage. */
export class UnreadablePackageError extends Error {
  constructor(
    /** Stable sub-reason, used to pick the finding. */
    readonly reason: 'not-zip' | 'missing-manifest' | 'corrupt-manifest' | 'wrong-platform' | 'io',
    message: string,
  ) {
    super(message);
    this.name = 'UnreadablePackageError';
  }
}

/** Thrown when a package reaches one of the caps in limits.ts; analyzePackage turns it into `scan.incomplete`. */
export class LimitExceededError extends Error {
  constructor(
    readonly limit: LimitName,
    message: string,
  ) {
    super(message);
    this.name = 'LimitExceededError';
  }
}
