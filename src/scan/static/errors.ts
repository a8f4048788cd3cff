/** Thrown inside the analyser when a package or one of its entries cannot be read; never escapes analyzePackage. */
export class UnreadablePackageError extends Error {
  constructor(
    /** Stable sub-reason, used to pick the finding. */
    readonly reason: 'not-zip' | 'missing-manifest' | 'corrupt-manifest' | 'wrong-platform' | 'entry-too-large' | 'io',
    message: string,
  ) {
    super(message);
    this.name = 'UnreadablePackageError';
  }
}
