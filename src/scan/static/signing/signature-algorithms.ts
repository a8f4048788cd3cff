import { constants, createPublicKey, verify, type KeyObject } from 'node:crypto';
import type { ContentDigestAlgorithm } from './content-digest';
import type { VerityDigestAlgorithm } from './verity-digest';

/** Every content digest a v2/v3 signature can vouch for: the 1 MiB chunked ones and the verity Merkle tree root. */
export type ApkDigestAlgorithm = ContentDigestAlgorithm | VerityDigestAlgorithm;

/**
 * The signature algorithms of APK Signature Scheme v2/v3 (apksig's SignatureAlgorithm), with what node:crypto needs
 * to verify them; `minSdk` is the platform version that first verifies the algorithm. The verity algorithms (0x0421,
 * 0x0423, 0x0425, from Android 9) vouch for a Merkle tree root of the package (verity-digest.ts); apksigner signs
 * with them, beside the chunked ones, when asked (--verity-enabled).
 */
export type ApkSignatureAlgorithm = {
  id: number;
  name: string;
  hash: 'sha256' | 'sha512';
  key: 'rsa' | 'rsa-pss' | 'ec' | 'dsa';
  digest: ApkDigestAlgorithm;
  minSdk: number;
};

const N = 24;
const P = 28;
export const APK_SIGNATURE_ALGORITHMS: ReadonlyMap<number, ApkSignatureAlgorithm> = new Map(
  ([
    [0x0101, 'RSASSA-PSS with SHA2-256', 'sha256', 'rsa-pss', 'CHUNKED_SHA256', N],
    [0x0102, 'RSASSA-PSS with SHA2-512', 'sha512', 'rsa-pss', 'CHUNKED_SHA512', N],
    [0x0103, 'RSASSA-PKCS1-v1_5 with SHA2-256', 'sha256', 'rsa', 'CHUNKED_SHA256', N],
    [0x0104, 'RSASSA-PKCS1-v1_5 with SHA2-512', 'sha512', 'rsa', 'CHUNKED_SHA512', N],
    [0x0201, 'ECDSA with SHA2-256', 'sha256', 'ec', 'CHUNKED_SHA256', N],
    [0x0202, 'ECDSA with SHA2-512', 'sha512', 'ec', 'CHUNKED_SHA512', N],
    [0x0301, 'DSA with SHA2-256', 'sha256', 'dsa', 'CHUNKED_SHA256', N],
    [0x0421, 'verity RSASSA-PKCS1-v1_5 with SHA2-256', 'sha256', 'rsa', 'VERITY_CHUNKED_SHA256', P],
    [0x0423, 'verity ECDSA with SHA2-256', 'sha256', 'ec', 'VERITY_CHUNKED_SHA256', P],
    [0x0425, 'verity DSA with SHA2-256', 'sha256', 'dsa', 'VERITY_CHUNKED_SHA256', P],
  ] as const).map(([id, name, hash, key, digest, minSdk]) => [id, { id, name, hash, key, digest, minSdk }]),
);

/** apksig's compareContentDigestAlgorithm: SHA-512 chunks over the verity tree over SHA-256 chunks. */
const DIGEST_RANK: Record<ApkDigestAlgorithm, number> = { CHUNKED_SHA256: 1, VERITY_CHUNKED_SHA256: 2, CHUNKED_SHA512: 3 };

/**
 * The signatures apksig verifies out of a signer's supported ones over [minSdk, maxSdk] (apksig's
 * getSignaturesToVerify): per platform version an algorithm starts at, the strongest one (ties keep the first listed),
 * leaving out those that start after maxSdk; in algorithm id order. Null when no signature covers minSdk (the
 * oldest platform in range would find none it supports).
 */
export function signaturesToVerify<T extends { algorithm: ApkSignatureAlgorithm }>(supported: T[], minSdk: number, maxSdk: number): T[] | null {
  const best = new Map<number, T>();
  for (const s of supported) {
    if (s.algorithm.minSdk > maxSdk) continue;
    const current = best.get(s.algorithm.minSdk);
    if (!current || DIGEST_RANK[s.algorithm.digest] > DIGEST_RANK[current.algorithm.digest]) best.set(s.algorithm.minSdk, s);
  }
  if (best.size === 0 || minSdk < Math.min(...best.keys())) return null;
  return [...best.values()].sort((a, b) => a.algorithm.id - b.algorithm.id);
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
