import { X509Certificate } from 'node:crypto';
import { FormatError, Reader } from './length-prefixed';
import { APK_SIGNATURE_ALGORITHMS, verifyApkSignature } from './signature-algorithms';

const LINEAGE_VERSION = 1;
/** Rotations recorded in one lineage: apps rotate once or twice in their life. */
const MAX_NODES = 32;

/**
 * Reads and verifies a v3 proof-of-rotation (apksig's V3SigningCertificateLineage): each certificate after the first
 * is signed by the one before it, with the algorithm the earlier node names, and none repeats. Returns the
 * certificates oldest first, or the check that failed.
 */
export function readLineage(value: Buffer): Buffer[] | string {
  try {
    const r = new Reader(value);
    if (r.u32() !== LINEAGE_VERSION) return 'proof-of-rotation has an unknown version';
    const certs: Buffer[] = [];
    let last: X509Certificate | null = null;
    let lastAlgorithmId = 0;
    for (const node of r.all(MAX_NODES)) {
      const n = new Reader(node);
      const signedData = n.prefixed();
      n.u32(); // flags: capabilities granted to the earlier key, not part of the verdict
      const algorithmId = n.u32();
      const signature = n.prefixed();
      if (last) {
        const alg = APK_SIGNATURE_ALGORITHMS.get(lastAlgorithmId);
        if (!alg || !verifyApkSignature(alg, last.publicKey, signedData, signature)) return `proof-of-rotation certificate #${certs.length + 1} is not signed by the one before it`;
      }
      const s = new Reader(signedData);
      const cert = s.prefixed();
      const signedAlgorithmId = s.u32();
      if (last && signedAlgorithmId !== lastAlgorithmId) return `proof-of-rotation certificate #${certs.length + 1} names another signature algorithm than its signer`;
      if (certs.some((c) => c.equals(cert))) return 'proof-of-rotation repeats a certificate';
      last = new X509Certificate(cert);
      certs.push(Buffer.from(cert));
      lastAlgorithmId = algorithmId;
    }
    return certs;
  } catch (err) {
    if (err instanceof FormatError) return `malformed proof-of-rotation (${err.message})`;
    return 'proof-of-rotation holds a certificate that cannot be parsed';
  }
}
