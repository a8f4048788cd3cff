import type { AndroidSigning, Finding } from '../../types';
import { LimitExceededError, UnreadablePackageError } from '../errors';
import { LIMITS } from '../limits';
import { certificateFindings, type SignerCertificate } from '../signing/certificate-rules';
import { DerError } from '../signing/der';
import { pkcs7Certificates } from '../signing/pkcs7';
import { SCHEME_V2, SCHEME_V3, SCHEME_V31, readSigningBlock, schemeCertificates } from '../signing/signing-block';
import type { PackageZip } from '../zip-reader';
import type { ManifestModel } from './manifest-model';
import { schemeFindings, unsignedFinding } from './signature-rules';

const SIGNATURE_FILE = /^META-INF\/[^/]+\.(RSA|DSA|EC)$/i;

/** Entries the signature check reads by name. */
export function isSignatureEntry(name: string): boolean {
  return SIGNATURE_FILE.test(name);
}

export type AndroidSignature = { findings: Finding[]; signing: AndroidSigning | null };

export async function androidSignature(zip: PackageZip, filePath: string, m: ManifestModel, bundle: boolean, now: Date): Promise<AndroidSignature> {
  return { findings: await signingFindings(zip, filePath, m, bundle, now), signing: null };
}

async function signingFindings(zip: PackageZip, filePath: string, m: ManifestModel, bundle: boolean, now: Date): Promise<Finding[]> {
  const certs: SignerCertificate[] = [];
  const out: Finding[] = [];
  const v1Files = zip.names().filter((n) => SIGNATURE_FILE.test(n));
  if (v1Files.length > LIMITS.signatureFiles) {
    throw new LimitExceededError('signatureFiles', `the package has ${v1Files.length} v1 signature files, over the ${LIMITS.signatureFiles}-file limit`);
  }
  for (const name of v1Files) {
    try {
      for (const der of pkcs7Certificates(await zip.read(name, 'signatureFile'))) certs.push({ scheme: bundle ? 'jar' : 'v1', der });
    } catch (err) {
      if (!(err instanceof DerError) && !(err instanceof UnreadablePackageError)) throw err;
      out.push(corruptSignatureFinding(name, err.message));
    }
  }
  if (bundle) {
    if (v1Files.length === 0) return [unsignedFinding('App Bundle')];
    return [...out, ...certificateFindings(certs, now)];
  }
  const block = await readSigningBlock(filePath);
  const v2 = block?.get(SCHEME_V2);
  const v3 = block?.get(SCHEME_V3) ?? block?.get(SCHEME_V31);
  if (v2) for (const der of schemeCertificates(v2)) certs.push({ scheme: 'v2', der });
  if (v3) for (const der of schemeCertificates(v3)) certs.push({ scheme: 'v3', der });
  out.push(...schemeFindings({ v1: v1Files.length > 0, v2: !!v2, v3: !!v3 }, m.minSdk, m.targetSdk));
  return [...out, ...certificateFindings(certs, now)];
}

function corruptSignatureFinding(name: string, why: string): Finding {
  return {
    id: 'android.signature-corrupt',
    severity: 'high',
    title: 'Signature file is malformed',
    detail: `${name} is not a readable PKCS#7 SignedData structure (${why}); Android will reject the v1 signature.`,
    fix: 'Re-sign the package from the unsigned build with apksigner (`apksigner sign --ks release.jks app.apk`) instead of editing META-INF by hand.',
  };
}
