/** How bad a finding is; each severity carries a fixed score penalty (see score.ts). */
export type Severity = 'low' | 'medium' | 'high' | 'critical';

/** One scan result line, as a rule emits it. */
export type Finding = {
  /** Stable rule id such as `android.debuggable`; clients may key on it. */
  id: string;
  severity: Severity;
  title: string;
  detail: string;
  fix: string;
  /**
   * What the finding is about when its rule can fire more than once per scan: the component, domain, library path,
   * file, permission or key. Never volatile text (versions, dates, counts, SDK levels): it goes into the finding's
   * fingerprint (src/scan/fingerprint.ts), which must stay the same across builds. Internal: the API never shows it.
   */
  location?: string;
};

/** `new` when the baseline scan has no finding of the same fingerprint, `existing` when it has. */
export type FindingStatus = 'new' | 'existing';

/** The suppression that accepted a finding when its scan was made. */
export type FindingSuppression = { id: string; reason: string; expiresAt: Date };

/**
 * A finding as a scan stores it: compared with the baseline and matched against the app's suppressions. Scans
 * stored before fingerprints existed hold plain findings (no fingerprint, status nor suppressed).
 */
export type ScanFinding = Finding & { fingerprint?: string; status?: FindingStatus; suppressed?: FindingSuppression | null };

/** A finding named by rule, fingerprint and title: one the baseline had and this scan has not, or one come back. */
export type FindingRef = { id: string; fingerprint: string; title: string };

export type Platform = 'android' | 'ios';

export const SEVERITIES: readonly Severity[] = ['low', 'medium', 'high', 'critical'];

/** One signing certificate of a package, as the API shows it (`sha256` is what `apksigner verify --print-certs` prints). */
export type AndroidSigner = { sha256: string; subject: string; notAfter: string; keyAlgorithm: string; keyBits: number | null };

/** A verified (or not) Android signature: `schemes` lists only the schemes that verified; `lineage` is v3 proof-of-rotation, oldest first. */
export type AndroidSigning = { verified: boolean; schemes: string[]; signers: AndroidSigner[]; lineage: string[] };

/**
 * The seal of an iOS bundle: who signed it (the leaf first) and the team of its certificate. `teamId` and `keySha256`
 * (SHA-256 of the signer's SubjectPublicKeyInfo, which continuity pins) are set only when the signer's certificate
 * chains to Apple (docs/scan-evidence.md, "The iOS seal"); `keySha256` is absent on scans stored before that check.
 */
export type IosSigning = {
  verified: boolean;
  teamId: string | null;
  signers: Array<{ sha256: string; subject: string; notAfter: string }>;
  keySha256?: string | null;
};

/** `signing` of a static scan (null for packages that could not be analysed). */
export type ScanSigning = AndroidSigning | IosSigning;

/** One native library of a package: its path in the archive, its ABI (Android) or architecture (iOS) and the SHA-256 of its bytes. */
export type NativeLibrary = { path: string; abi: string; sha256: string };

/** A third-party SDK recognised in a package, with what gave it away (a package prefix in DEX type names, a framework name). */
export type RecognisedSdk = { name: string; evidence: string };

/** `inventory` of a static scan (null for preview scans and packages not analysed): what the package holds. */
export type ScanInventory = { nativeLibraries: NativeLibrary[]; permissions: string[]; sdks: RecognisedSdk[] };
