import { createHash } from 'node:crypto';
import { MalformedApkError, type ApkSections } from './apk-sections';
import { READ_CHUNK, withReadBuffer } from './zip-entries';

/** The content digests of APK Signature Scheme v2/v3 that are computed here. */
export type ContentDigestAlgorithm = 'CHUNKED_SHA256' | 'CHUNKED_SHA512';

const CHUNK = 1024 * 1024;
const HASH: Record<ContentDigestAlgorithm, string> = { CHUNKED_SHA256: 'sha256', CHUNKED_SHA512: 'sha512' };

/**
 * The chunked digests of the three sections the v2+ schemes sign: the entries (up to the APK Signing Block), the
 * central directory, and the end-of-central-directory record with its central-directory offset replaced by the
 * block's offset (so the digest does not depend on the block it is stored in). Each section is cut into 1 MiB
 * chunks; a chunk's digest is H(0xa5 || uint32le length || chunk), the top digest H(0x5a || uint32le count ||
 * chunk digests). Every byte of the file but the block is read once, whatever the number of algorithms.
 */
export async function contentDigests(s: ApkSections, algorithms: ReadonlySet<ContentDigestAlgorithm>): Promise<Map<ContentDigestAlgorithm, Buffer>> {
  const algs = [...algorithms];
  const chunkDigests = new Map<ContentDigestAlgorithm, Buffer[]>(algs.map((a) => [a, []]));
  const blockOffset = s.signingBlock?.offset ?? s.cdOffset;
  const eocd = Buffer.from(s.eocd);
  eocd.writeUInt32LE(blockOffset, 16);
  const digestChunk = (chunk: Buffer) => {
    const prefix = Buffer.alloc(5);
    prefix[0] = 0xa5;
    prefix.writeUInt32LE(chunk.length, 1);
    for (const a of algs) chunkDigests.get(a)!.push(createHash(HASH[a]).update(prefix).update(chunk).digest());
  };
  // One buffer for every read: each slice is digested before the next read, and 500 MB of fresh buffers cost
  // garbage collection for nothing.
  await withReadBuffer(async (buffer) => {
    // The central directory as the end record declares it (apksig's slice): bytes between it and the end record are
    // no signed section.
    for (const [start, end] of [[0, blockOffset], [s.cdOffset, s.cdOffset + s.cdSize]] as const) {
      for (let at = start; at < end; ) {
        const { bytesRead } = await s.fh.read(buffer, 0, Math.min(READ_CHUNK, end - at), at);
        const slice = buffer.subarray(0, bytesRead);
        if (slice.length === 0) throw new MalformedApkError('the file ends inside a signed section');
        for (let p = 0; p < slice.length; p += CHUNK) digestChunk(slice.subarray(p, Math.min(p + CHUNK, slice.length)));
        at += slice.length;
      }
    }
  });
  for (let p = 0; p < eocd.length; p += CHUNK) digestChunk(eocd.subarray(p, Math.min(p + CHUNK, eocd.length)));
  const out = new Map<ContentDigestAlgorithm, Buffer>();
  for (const a of algs) {
    const digests = chunkDigests.get(a)!;
    const prefix = Buffer.alloc(5);
    prefix[0] = 0x5a;
    prefix.writeUInt32LE(digests.length, 1);
    const top = createHash(HASH[a]).update(prefix);
    for (const d of digests) top.update(d);
    out.set(a, top.digest());
  }
  return out;
}
