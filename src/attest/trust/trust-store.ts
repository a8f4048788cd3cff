import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { ConfigError } from '../../core/config';
import { APPLE_APP_ATTEST_ROOTS } from '../roots/apple';
import { GOOGLE_ATTESTATION_ROOTS } from '../roots/google';
import { GOOGLE_REVOCATION_SNAPSHOT } from '../roots/google-revocation';
import { loadPemCertificates } from '../roots/pem';
import { parseRevocationList, type RevocationList, type TrustRoot } from '../key-attestation';

/**
 * What the engines trust, read once at start (docs/attestation.md, "Trust roots"): the built-in roots and revocation
 * snapshot, or the operator's files in their place. Verification never calls a remote service, so nothing here
 * changes while the process runs; replacing a file takes a restart.
 */
export interface AttestTrust {
  appleRoots: readonly X509Certificate[];
  googleRoots: readonly TrustRoot[];
  revocation: RevocationList;
}

function readFile(name: string, file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`${name}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

/** Roots from an operator's PEM file; each trusted for its own validity period. */
function pemRoots(name: string, file: string): X509Certificate[] {
  try {
    return loadPemCertificates(readFile(name, file));
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(`${name}: ${(err as Error).message}`);
  }
}

const windowOf = (cert: X509Certificate): TrustRoot => ({ cert, notBefore: new Date(cert.validFrom), notAfter: new Date(cert.validTo) });

export function loadAttestTrust(config: { appleRoots: string | null; googleRoots: string | null; revocationList: string | null }): AttestTrust {
  const appleRoots = config.appleRoots ? pemRoots('ATTEST_APPLE_ROOTS', config.appleRoots) : APPLE_APP_ATTEST_ROOTS.map((r) => new X509Certificate(r.pem));
  const googleRoots = config.googleRoots
    ? pemRoots('ATTEST_GOOGLE_ROOTS', config.googleRoots).map(windowOf)
    : GOOGLE_ATTESTATION_ROOTS.map((r) => ({ cert: new X509Certificate(r.pem), notBefore: r.notBefore, notAfter: r.notAfter }));
  let revocation: RevocationList;
  try {
    revocation = parseRevocationList(config.revocationList ? readFile('ATTEST_REVOCATION_LIST', config.revocationList) : GOOGLE_REVOCATION_SNAPSHOT);
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(`ATTEST_REVOCATION_LIST: ${(err as Error).message}`);
  }
  return { appleRoots, googleRoots, revocation };
}
