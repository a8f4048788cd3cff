import { createHash } from 'node:crypto';
import { MalformedApkError, readAt, type ApkSections } from './apk-sections';
import { READ_CHUNK } from './zip-entries';

/** The content digest of the verity signature algorithms (0x0421, 0x0423, 0x0425), as apksig names it. */
export const VERITY_CHUNKED_SHA256 = 'VERITY_CHUNKED_SHA256';
export type VerityDigestAlgorithm = typeof VERITY_CHUNKED_SHA256;

const PAGE = 4096;
const DIGEST = 32;
/** apksig builds the tree with 8 zero bytes of salt before every block it digests. */
const SALT = Buffer.alloc(8);

/**
 * Null when verity digests can be computed over this package: apksig computes them only when the entries end, and the
 * APK Signing Block ends, on a 4 KiB page (apksigner --verity-enabled pads the block so); otherwise what is wrong.
 */
export function verityLayoutProblem(s: ApkSections): string | null {
  const blockOffset = s.signingBlock?.offset ?? s.cdOffset;
  if (blockOffset % PAGE !== 0) return `the APK Signing Block starts at ${blockOffset}, not on a 4 KiB page boundary, as verity digests need`;
  if ((s.cdOffset - blockOffset) % PAGE !== 0) return `the APK Signing Block is ${s.cdOffset - blockOffset} bytes, not a whole number of 4 KiB pages, as verity digests need`;
  return null;
}

/**
 * VERITY_CHUNKED_SHA256 as apksig's ApkSigningBlockUtils.computeApkVerityDigest computes it: the fs-verity Merkle
 * tree root of the same three sections the chunked digests cover (entries, central directory, and the EOCD with its
 * central-directory offset pointing at the signing block), read as one stream cut into 4 KiB blocks, the last one
 * zero-padded; each block's digest is SHA-256(salt || block), each level's digests are zero-padded to whole pages
 * and digested the same way until one page remains, whose salted SHA-256 is the root. The digest is the root
 * followed by the sections' total length (uint64 little-endian). Reads every byte once; the tree's first level is
 * 32 bytes per 4 KiB of package.
 */
export async function verityDigest(s: ApkSections): Promise<Buffer> {
  const problem = verityLayoutProblem(s);
  if (problem) throw new MalformedApkError(problem);
  const blockOffset = s.signingBlock?.offset ?? s.cdOffset;
  const eocd = Buffer.from(s.eocd);
  eocd.writeUInt32LE(blockOffset, 16);
  const total = blockOffset + s.cdSize + eocd.length;
  // One buffer per level, its size known up front (the EOCD makes total > 0).
  let level = Buffer.alloc(levelSize(total));
  let leaves = 0;
  let pending = Buffer.alloc(0);
  // Sections need not end on a page: a block may span the central directory and the EOCD.
  const feed = (bytes: Buffer) => {
    let p = 0;
    if (pending.length) {
      p = Math.min(PAGE - pending.length, bytes.length);
      pending = Buffer.concat([pending, bytes.subarray(0, p)]);
      if (pending.length < PAGE) return;
      saltedDigest(pending).copy(level, DIGEST * leaves++);
    }
    for (; p + PAGE <= bytes.length; p += PAGE) saltedDigest(bytes.subarray(p, p + PAGE)).copy(level, DIGEST * leaves++);
    pending = Buffer.from(bytes.subarray(p));
  };
  // The central directory as the end record declares it (apksig's slice): bytes between it and the end record are
  // no signed section.
  for (const [start, end] of [[0, blockOffset], [s.cdOffset, s.cdOffset + s.cdSize]] as const) {
    for (let at = start; at < end; ) {
      const slice = await readAt(s.fh, at, Math.min(READ_CHUNK, end - at));
      if (slice.length === 0) throw new MalformedApkError('the file ends inside a signed section');
      feed(slice);
      at += slice.length;
    }
  }
  feed(eocd);
  if (pending.length) saltedDigest(Buffer.concat([pending, Buffer.alloc(PAGE - pending.length)])).copy(level, DIGEST * leaves++);
  while (level.length > PAGE) {
    const next = Buffer.alloc(levelSize(level.length));
    for (let p = 0, i = 0; p < level.length; p += PAGE, i++) saltedDigest(level.subarray(p, p + PAGE)).copy(next, DIGEST * i);
    level = next;
  }
  const out = Buffer.alloc(DIGEST + 8);
  saltedDigest(level).copy(out, 0);
  out.writeBigUInt64LE(BigInt(total), DIGEST);
  return out;
}

/** Bytes of the tree level over `dataLength` bytes: one digest per 4 KiB, zero-padded to whole pages. */
function levelSize(dataLength: number): number {
  return Math.ceil((Math.ceil(dataLength / PAGE) * DIGEST) / PAGE) * PAGE;
}

function saltedDigest(block: Buffer): Buffer {
  return createHash('sha256').update(SALT).update(block).digest();
}
