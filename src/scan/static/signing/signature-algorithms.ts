import { constants, createPublicKey, verify, type KeyObject } from 'node:crypto';
import type { ContentDigestAlgorithm } from './content-digest';

/**
 * The signature algorithms of APK Signature Scheme v2/v3 (apksig's SignatureAlgorithm), with what node:crypto needs
 * to verify them. `rank` orders content digests as apksig's compareContentDigestAlgorithm does (SHA-512 over
 * SHA-256); `minSdk` is the platform version that first verifies the algorithm. The verity algorithms (0x0421,
 * 0x0423, 0x0425) digest the package as a Merkle tree; they are not computed here, so a signer that offers only
 * those is treated as having no supported signature (apksigner signs with them only when asked, --verity-enabled).
 */
export type ApkSignatureAlgorithm = {
  id: number;
  name: string;
  hash: 'sha256' | 'sha512';
  key: 'rsa' | 'rsa-pss' | 'ec' | 'dsa';
  digest: ContentDigestAlgorithm;
  minSdk: number;
};

const N = 24;
export const APK_SIGNATURE_ALGORITHMS: ReadonlyMap<number, ApkSignatureAlgorithm> = new Map(
  ([
    [0x0101, 'RSASSA-PSS with SHA2-256', 'sha256', 'rsa-pss', 'CHUNKED_SHA256'],
    [0x0102, 'RSASSA-PSS with SHA2-512', 'sha512', 'rsa-pss', 'CHUNKED_SHA512'],
    [0x0103, 'RSASSA-PKCS1-v1_5 with SHA2-256', 'sha256', 'rsa', 'CHUNKED_SHA256'],
    [0x0104, 'RSASSA-PKCS1-v1_5 with SHA2-512', 'sha512', 'rsa', 'CHUNKED_SHA512'],
    [0x0201, 'ECDSA with SHA2-256', 'sha256', 'ec', 'CHUNKED_SHA256'],
    [0x0202, 'ECDSA with SHA2-512', 'sha512', 'ec', 'CHUNKED_SHA512'],
    [0x0301, 'DSA with SHA2-256', 'sha256', 'dsa', 'CHUNKED_SHA256'],
  ] as const).map(([id, name, hash, key, digest]) => [id, { id, name, hash, key, digest, minSdk: N }]),
);

const DIGEST_RANK: Record<ContentDigestAlgorithm, number> = { CHUNKED_SHA256: 1, CHUNKED_SHA512: 2 };

/**
 * The signatures apksig verifies out of a signer's supported ones: the strongest per minimum platform version
 * (apksig's getSignaturesToVerify). All algorithms here start at Android 7.0, so that is the strongest one; ties
 * keep the first listed.
 */
export function signaturesToVerify<T extends { algorithm: ApkSignatureAlgorithm }>(supported: T[]): T[] {
  let best: T | null = null;
  for (const s of supported) if (!best || DIGEST_RANK[s.algorithm.digest] > DIGEST_RANK[best.algorithm.digest]) best = s;
  return best ? [best] : [];
}

/** The public key of a SubjectPublicKeyInfo (DER), or null when it is not one node:crypto can read. */
export function publicKeyOf(spki: Buffer): KeyObject | null {
  try {
    return createPublicKey({ key: spki, format: 'der', type: 'spki' });
  } catch {
    return null;
  }
}

/** Whether `signature` over `data` verifies with `key` under `alg`; a key of the wrong type does not verify. */
export function verifyApkSignature(alg: ApkSignatureAlgorithm, key: KeyObject, data: Buffer, signature: Buffer): boolean {
  const type = key.asymmetricKeyType;
  const keyFits = alg.key === 'rsa' || alg.key === 'rsa-pss' ? type === 'rsa' || type === 'rsa-pss' : type === alg.key;
  if (!keyFits) return false;
  try {
    if (alg.key === 'rsa-pss') {
      // PSS with MGF1 over the same hash and a salt as long as the hash (32 or 64 bytes), as apksig signs.
      return verify(alg.hash, data, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: alg.hash === 'sha256' ? 32 : 64 }, signature);
    }
    if (alg.key === 'rsa') return verify(alg.hash, data, { key, padding: constants.RSA_PKCS1_PADDING }, signature);
    // ECDSA and DSA signatures are DER SEQUENCE { r, s }, node's default encoding.
    return verify(alg.hash, data, { key, dsaEncoding: 'der' }, signature);
  } catch {
    return false;
  }
}
