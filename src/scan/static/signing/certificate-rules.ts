import { X509Certificate } from 'node:crypto';
import type { Finding, Severity } from '../../model/types';
import { certificateSignatureOid } from './pkcs7';

/** A signing certificate and the schemes it verified with, as findings name them ("v1+v2", "jar"). */
export type SignerCertificate = { scheme: string; der: Buffer };

// Certificate signature algorithms that no longer resist forgery (collisions for MD2/MD5, SHA-1 chosen-prefix).
const WEAK_ALGORITHMS: ReadonlyMap<string, { name: string; severity: Severity }> = new Map([
  ['1.2.840.113549.1.1.2', { name: 'md2WithRSAEncryption', severity: 'high' }],
  ['1.2.840.113549.1.1.4', { name: 'md5WithRSAEncryption', severity: 'high' }],
  ['1.2.840.113549.1.1.5', { name: 'sha1WithRSAEncryption', severity: 'medium' }],
  ['1.2.840.10040.4.3', { name: 'dsaWithSHA1', severity: 'medium' }],
  ['1.2.840.10045.4.1', { name: 'ecdsa-with-SHA1', severity: 'medium' }],
]);
const MIN_RSA_BITS = 2048;
const MIN_EC_BITS = 256;

/** Findings about the signing certificates: debug key, expiry, weak algorithm or key. Duplicates across schemes count once. */
export function certificateFindings(certs: SignerCertificate[], now: Date): Finding[] {
  const seen = new Map<string, { cert: X509Certificate; der: Buffer; schemes: string[] }>();
  const unparsable: string[] = [];
  for (const c of certs) {
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(c.der);
    } catch {
      unparsable.push(c.scheme);
      continue;
    }
    const entry = seen.get(cert.fingerprint256) ?? { cert, der: c.der, schemes: [] };
    entry.schemes.push(c.scheme);
    seen.set(cert.fingerprint256, entry);
  }
  const out: Finding[] = [...seen.values()].flatMap(({ cert, der, schemes }) => oneCertificate(cert, der, schemes.join('+'), now));
  if (unparsable.length) {
    out.push({
      id: 'android.certificate-unreadable',
      severity: 'medium',
      title: 'Signing certificate cannot be parsed',
      detail: `The ${unparsable.join(', ')} signature carries a certificate that is not valid X.509 DER, so its key and validity cannot be checked.`,
      fix: 'Re-sign the package with apksigner and a keystore created by keytool (`apksigner sign --ks release.jks app.apk`).',
    });
  }
  return out;
}

function oneCertificate(cert: X509Certificate, der: Buffer, schemes: string, now: Date): Finding[] {
  const out: Finding[] = [];
  const subject = cert.subject.replace(/\n/g, ', ');
  const fingerprint = cert.fingerprint256.replace(/:/g, '').toLowerCase();
  const who = `certificate "${subject}" (SHA-256 ${fingerprint.slice(0, 16)}…, ${schemes} signature)`;
  if (isDebugSubject(cert.subject)) {
    out.push({
      id: 'android.debug-certificate',
      severity: 'high',
      title: 'Signed with the Android debug certificate',
      detail: `The package is signed by ${who}, the key Android Studio generates in ~/.android/debug.keystore; it is not protected, Google Play rejects it, and anyone holding a copy of that keystore can ship updates that replace this app.`,
      fix: 'Create a release key (`keytool -genkeypair -keystore release.jks -keyalg RSA -keysize 3072 -validity 10000 -alias release`), configure it in signingConfigs.release, and enrol in Play App Signing.',
      location: fingerprint,
    });
  }
  const validTo = new Date(cert.validTo);
  if (!Number.isNaN(validTo.getTime()) && validTo.getTime() < now.getTime()) {
    out.push({
      id: 'android.certificate-expired',
      severity: 'medium',
      title: 'Signing certificate has expired',
      detail: `${capitalise(who)} expired on ${validTo.toISOString().slice(0, 10)}. Android installs it still, but Google Play refuses uploads signed with an expired certificate and tools that verify validity reject it.`,
      fix: 'Rotate to a new signing key with APK Signature Scheme v3 (`apksigner rotate --out lineage --old-signer --ks old.jks --new-signer --ks new.jks`, then sign with --lineage), or use Play App Signing key upgrade.',
      location: fingerprint,
    });
  }
  const weakAlg = weakAlgorithm(der);
  if (weakAlg) {
    out.push({
      id: 'android.weak-signature-algorithm',
      severity: weakAlg.severity,
      title: 'Signing certificate uses a weak signature algorithm',
      detail: `${capitalise(who)} is signed with ${weakAlg.name}, a hash that is broken for collision resistance.`,
      fix: 'Generate a new key whose certificate uses SHA256withRSA (`keytool -genkeypair -sigalg SHA256withRSA -keyalg RSA -keysize 3072 …`) and rotate to it with APK Signature Scheme v3 key rotation.',
      location: fingerprint,
    });
  }
  out.push(...weakKey(cert, who, fingerprint));
  return out;
}

function isDebugSubject(subject: string): boolean {
  const parts = new Set(subject.split('\n').map((s) => s.trim()));
  return parts.has('CN=Android Debug') && parts.has('O=Android');
}

function weakAlgorithm(der: Buffer): { name: string; severity: Severity } | undefined {
  try {
    return WEAK_ALGORITHMS.get(certificateSignatureOid(der));
  } catch {
    return undefined;
  }
}

function weakKey(cert: X509Certificate, who: string, fingerprint: string): Finding[] {
  const key = cert.publicKey;
  const bits = key.asymmetricKeyDetails?.modulusLength;
  const type = key.asymmetricKeyType;
  const tooSmall = (type === 'rsa' || type === 'dsa') && bits !== undefined && bits < MIN_RSA_BITS;
  const curve = key.asymmetricKeyDetails?.namedCurve;
  const smallCurve = type === 'ec' && curve !== undefined && !/256|384|521/.test(curve);
  if (!tooSmall && !smallCurve) return [];
  return [
    {
      id: 'android.weak-signing-key',
      severity: tooSmall && bits !== undefined && bits < 1536 ? 'high' : 'medium',
      title: 'Signing key is too short',
      detail: `${capitalise(who)} has a ${tooSmall ? `${bits}-bit ${type!.toUpperCase()}` : `${curve} EC`} key; keys below ${tooSmall ? MIN_RSA_BITS : MIN_EC_BITS} bits are within reach of well-funded attackers, who could then sign updates as you.`,
      fix: `Generate a ${type === 'ec' ? 'P-256 EC' : 'RSA 3072-bit'} key (\`keytool -genkeypair -keyalg ${type === 'ec' ? 'EC -groupname secp256r1' : 'RSA -keysize 3072'} …\`) and rotate to it with APK Signature Scheme v3 key rotation.`,
      location: fingerprint,
    },
  ];
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
