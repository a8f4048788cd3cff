/** The signature schemes of an APK, as apksigner names them in `verify -v`. */
export type ApkScheme = 'v1' | 'v2' | 'v3' | 'v3.1';

/** One check that failed: which scheme, which signer (1-based, null when the failure is not a signer's) and what. */
export type SignatureFailure = { scheme: ApkScheme; signer: number | null; check: string };

/**
 * The verdict on an APK's (or, with scheme v1 only, an App Bundle's) signatures, reached as `apksigner verify` reaches it
 * over [minSdk, maxSdk]. `verified` is apksigner's exit status; `schemes` the schemes it would print as "Verified using
 * ...: true"; `signers` the DER certificates it would print with --print-certs (the effective signer: the newest v3.1 or
 * v3 signer, else every v2 signer, else every v1 signer); `lineage` the v3 proof-of-rotation certificates, oldest first.
 */
export type ApkVerification = {
  verified: boolean;
  /** Schemes whose block or files are present, verified or not. */
  present: ApkScheme[];
  schemes: ApkScheme[];
  signers: Buffer[];
  lineage: Buffer[];
  failures: SignatureFailure[];
  /** Entries under META-INF/ no verified JAR signature covers (apksig warns of them); empty when v1 was not checked. */
  unprotectedEntries?: string[];
};

export type VerifyOptions = {
  /** minSdkVersion the manifest declares (1 when absent). */
  minSdk: number;
  /** Highest platform version to verify for; apksigner's default is "any" (Integer.MAX_VALUE). */
  maxSdk?: number;
  /** targetSdkVersion, for the platform's minimum scheme per target (v2 from 30). */
  targetSdk?: number;
  /** targetSandboxVersion (> 1 requires v2+). */
  targetSandboxVersion?: number;
  /** An App Bundle: only the JAR signature is verified, with no APK Signing Block and no stripping guard. */
  bundle?: boolean;
};
