import { X509Certificate } from 'node:crypto';
import { DER, StrictDerError, readWhole } from '../der';
import { strictBase64 } from '../strict-base64';

/**
 * Trust roots from an operator's PEM file (`ATTEST_APPLE_ROOTS`, `ATTEST_GOOGLE_ROOTS`). The file
 * is read once at start-up, so a mistake must stop the service with a message that names it, never leave it trusting
 * fewer roots than the operator meant: every block must be a certificate, and an empty file is an error too.
 * Text outside the blocks is allowed (bundles carry comments and "Bag Attributes" lines), a half-open block is not.
 */
const MAX_CERTIFICATES = 16;
const BLOCK = /-----BEGIN CERTIFICATE-----\r?\n([A-Za-z0-9+/=\r\n]*?)-----END CERTIFICATE-----/g;

export function loadPemCertificates(text: string): X509Certificate[] {
  const out: X509Certificate[] = [];
  for (const match of text.matchAll(BLOCK)) {
    if (out.length === MAX_CERTIFICATES) throw new Error(`PEM roots: more than ${MAX_CERTIFICATES} certificates`);
    const n = out.length + 1;
    // Node's base64 decoder skips what it does not know; strict decoding makes a damaged line an error, not a gap.
    const der = strictBase64(match[1].replace(/\r?\n/g, ''));
    if (!der || der.length === 0) throw new Error(`PEM roots: certificate ${n} is not base64`);
    try {
      readWhole(der, DER.SEQUENCE); // one DER value, nothing after it
      out.push(new X509Certificate(der));
    } catch (err) {
      const why = err instanceof StrictDerError ? err.message : 'not an X.509 certificate';
      throw new Error(`PEM roots: certificate ${n} does not parse (${why})`);
    }
  }
  // A BEGIN or END line that the pattern did not take is a damaged block, or another kind of object (a key, a CRL).
  const markers = text.match(/-----(BEGIN|END) [^-\r\n]*-----/g)?.length ?? 0;
  if (markers !== out.length * 2) throw new Error('PEM roots: a block is not a complete CERTIFICATE block');
  if (out.length === 0) throw new Error('PEM roots: no certificate');
  return out;
}
