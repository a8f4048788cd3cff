import { createHash, X509Certificate } from 'node:crypto';
import type { AndroidSigner, AndroidSigning, Finding } from '../../model/types';
import { certificateFindings } from '../signing/certificate-rules';
import { isMalformedApk, verifyApk } from '../signing/apk-verifier';
import type { ApkVerification, SignatureFailure } from '../signing/apk-verification';
import type { ManifestModel } from './manifest-model';
import { codenameApiLevel } from '../signing/codename-sdk';
import { schemeFindings, unprotectedEntriesFinding, unsignedFinding } from './signature-rules';

const SIGNATURE_FILE = /^META-INF\/[^/]+\.(RSA|DSA|EC)$/i;

/** Entries the manifest rules keep by name (the verifier reads the archive itself). */
export function isSignatureEntry(name: string): boolean {
  return SIGNATURE_FILE.test(name);
}

export type AndroidSignature = { findings: Finding[]; signing: AndroidSigning | null };

/**
 * The signature verdict of an APK or App Bundle, reached as `apksigner verify` reaches it over the SDK range the
 * manifest declares (see ../signing/apk-verifier.ts), and the findings it gives: none signed at all is
 * `android.unsigned`, a signature that does not verify `android.signature-invalid` (critical), and the rules on
 * schemes and certificates for what verified.
 */
export async function androidSignature(_zip: unknown, filePath: string, m: ManifestModel, bundle: boolean, now: Date): Promise<AndroidSignature> {
  const v = await verification(filePath, m, bundle);
  const signing: AndroidSigning = {
    verified: v.verified,
    schemes: v.schemes,
    signers: v.signers.map(describe),
    lineage: v.lineage.map(sha256),
  };
  if (v.present.length === 0) return { findings: [unsignedFinding(bundle ? 'App Bundle' : 'APK')], signing };
  const findings: Finding[] = [];
  if (!v.verified) findings.push(invalidFinding(v.failures, bundle));
  else findings.push(...unprotectedEntriesFinding(v.unprotectedEntries ?? []));
  if (!bundle) findings.push(...schemeFindings({ v1: v.present.includes('v1'), v2: v.present.includes('v2'), v3: v.present.includes('v3') || v.present.includes('v3.1') }, m.minSdk, m.targetSdk));
  const scheme = bundle ? 'jar' : v.schemes.join('+');
  findings.push(...certificateFindings(v.signers.map((der) => ({ scheme, der })), now));
  return { findings, signing };
}

async function verification(filePath: string, m: ManifestModel, bundle: boolean): Promise<ApkVerification> {
  try {
    // A preview codename is verified at apksig's level for it, as apksigner verify does (codename-sdk.ts).
    const minSdk = m.minSdkCodename === null ? m.minSdk : codenameApiLevel(m.minSdkCodename) ?? m.minSdk;
    return await verifyApk(filePath, { minSdk, targetSdk: bundle ? undefined : m.targetSdk, targetSandboxVersion: bundle ? undefined : m.targetSandboxVersion, bundle });
  } catch (err) {
    // A ZIP the reference verifier would not read ("Malformed APK") verifies nothing.
    if (!isMalformedApk(err)) throw err;
    return { verified: false, present: ['v1'], schemes: [], signers: [], lineage: [], failures: [{ scheme: 'v1', signer: null, check: `the archive is malformed: ${err.message}` }] };
  }
}

function invalidFinding(failures: SignatureFailure[], bundle: boolean): Finding {
  const lines = failures.slice(0, 4).map((f) => `${f.scheme}${f.signer === null ? '' : ` signer #${f.signer}`}: ${f.check}`);
  return {
    id: 'android.signature-invalid',
    severity: 'critical',
    title: `${bundle ? 'App Bundle' : 'APK'} signature does not verify`,
    detail: `${lines.join('; ')}. Android refuses to install a package whose signature does not verify, and a package changed after signing may not be what was built.`,
    fix: 'Rebuild and sign again from the unsigned build output (`zipalign -p 4 in.apk out.apk && apksigner sign --ks release.jks out.apk`), and never modify the package after signing; check it with `apksigner verify -v`.',
  };
}

function sha256(der: Buffer): string {
  return createHash('sha256').update(der).digest('hex');
}

/** What the API shows of a signer: the certificate's SHA-256 (what `apksigner verify --print-certs` prints) and its key. */
function describe(der: Buffer): AndroidSigner {
  const base = { sha256: sha256(der), subject: '', notAfter: '', keyAlgorithm: 'unknown', keyBits: null as number | null };
  try {
    const cert = new X509Certificate(der);
    const key = cert.publicKey;
    const details = key.asymmetricKeyDetails;
    const curveBits: Record<string, number> = { prime256v1: 256, secp384r1: 384, secp521r1: 521 };
    return {
      ...base,
      subject: cert.subject.replace(/\n/g, ', '),
      notAfter: new Date(cert.validTo).toISOString(),
      keyAlgorithm: (key.asymmetricKeyType ?? 'unknown').toUpperCase(),
      keyBits: details?.modulusLength ?? (details?.namedCurve ? curveBits[details.namedCurve] ?? null : null),
    };
  } catch {
    return base;
  }
}
