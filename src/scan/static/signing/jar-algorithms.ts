/**
 * Which digest and signature algorithm pairs of a JAR signature block Android verifies, and on which platform
 * versions (apksig's V1SchemeVerifier SUPPORTED_SIG_ALG_OIDS, the same table in the same shape). A pair missing
 * from the table is supported nowhere.
 */
const DIGESTS: Record<string, string> = {
  '1.2.840.113549.2.5': 'md5',
  '1.3.14.3.2.26': 'sha1',
  '2.16.840.1.101.3.4.2.4': 'sha224',
  '2.16.840.1.101.3.4.2.1': 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512',
};
/** Signature algorithm OIDs that name their own hash. */
const SIGNATURES: Record<string, { hash: string; key: 'rsa' | 'dsa' | 'ec' }> = {
  '1.2.840.113549.1.1.4': { hash: 'md5', key: 'rsa' },
  '1.2.840.113549.1.1.5': { hash: 'sha1', key: 'rsa' },
  '1.2.840.113549.1.1.14': { hash: 'sha224', key: 'rsa' },
  '1.2.840.113549.1.1.11': { hash: 'sha256', key: 'rsa' },
  '1.2.840.113549.1.1.12': { hash: 'sha384', key: 'rsa' },
  '1.2.840.113549.1.1.13': { hash: 'sha512', key: 'rsa' },
  '1.2.840.10040.4.3': { hash: 'sha1', key: 'dsa' },
  '2.16.840.1.101.3.4.3.1': { hash: 'sha224', key: 'dsa' },
  '2.16.840.1.101.3.4.3.2': { hash: 'sha256', key: 'dsa' },
  '1.2.840.10045.4.1': { hash: 'sha1', key: 'ec' },
  '1.2.840.10045.4.3.1': { hash: 'sha224', key: 'ec' },
  '1.2.840.10045.4.3.2': { hash: 'sha256', key: 'ec' },
  '1.2.840.10045.4.3.3': { hash: 'sha384', key: 'ec' },
  '1.2.840.10045.4.3.4': { hash: 'sha512', key: 'ec' },
};
/** Key algorithm OIDs, used as the signature algorithm with the digest named separately. */
const KEYS: Record<string, 'rsa' | 'dsa' | 'ec'> = { '1.2.840.113549.1.1.1': 'rsa', '1.2.840.10040.4.1': 'dsa', '1.2.840.10045.2.1': 'ec' };

type Range = [number, number];
const ANY = Number.MAX_SAFE_INTEGER;
const from = (n: number): Range => [n, ANY];
const L_21_23: Range[] = [[21, 23]];

/** The platform versions on which `digest` with `signature` verifies. */
function supportedRanges(digest: string, signature: string): Range[] {
  const d = DIGESTS[digest];
  const key = KEYS[signature];
  const named = SIGNATURES[signature];
  if (!d || (!key && !named)) return [];
  if (key === 'rsa') return { md5: [from(0)], sha1: [from(0)], sha224: [[0, 8], from(21)], sha256: [[0, 8], from(18)], sha384: [from(18)], sha512: [from(18)] }[d] as Range[];
  if (key === 'dsa') return { sha1: [from(0)], sha224: [from(22)], sha256: [from(22)] }[d] as Range[] ?? [];
  if (key === 'ec') return d === 'md5' ? [] : d === 'sha224' ? [from(21)] : [from(18)];
  // A signature OID that names its own hash: the matching digest is the native pair, any other is 21-23.
  if (named.key === 'rsa') {
    if (named.hash !== d) return d === 'sha256' && named.hash === 'sha1' ? [[21, 21]] : d === 'sha512' && named.hash === 'sha384' ? [[21, 21]] : d === 'sha224' && named.hash === 'sha256' ? [[21, 21]] : L_21_23;
    return { md5: [[0, 8], from(21)], sha1: [from(0)], sha224: [[0, 8], from(21)], sha256: [[0, 8], from(18)], sha384: [from(21)], sha512: [from(21)] }[d] as Range[];
  }
  if (named.key === 'dsa') {
    if (named.hash !== d) return L_21_23;
    return named.hash === 'sha1' ? [from(9)] : [from(21)];
  }
  if (named.hash !== d) return L_21_23;
  return named.hash === 'sha1' ? [from(18)] : [from(21)];
}

/** The platform versions of [min, max] on which the pair does not verify, e.g. "1-17" (empty when it verifies on all). */
export function unsupportedLevels(digest: string, signature: string, min: number, max: number): string {
  const ranges = supportedRanges(digest, signature);
  const gaps: string[] = [];
  let at = min;
  for (const [lo, hi] of [...ranges].sort((a, b) => a[0] - b[0])) {
    if (hi < at) continue;
    if (lo > max) break;
    if (lo > at) gaps.push(`${at}-${lo - 1}`);
    at = Math.max(at, hi === ANY ? ANY : hi + 1);
    if (at > max) break;
  }
  if (at <= max) gaps.push(max >= ANY ? `${at}+` : `${at}-${max}`);
  return gaps.join(', ');
}

/** The hash and key type node:crypto verifies the pair with (apksig's getJcaSignatureAlgorithm). */
export function jcaAlgorithm(digest: string, signature: string): { hash: string; key: 'rsa' | 'dsa' | 'ec' } | null {
  if (SIGNATURES[signature]) return SIGNATURES[signature];
  const key = KEYS[signature];
  const hash = DIGESTS[digest];
  return key && hash ? { hash, key } : null;
}

/** node:crypto's name for a digest OID, or null when it is not one Android knows. */
export function digestName(oid: string): string | null {
  return DIGESTS[oid] ?? null;
}
