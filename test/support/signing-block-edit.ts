// Byte-level edits of a signed APK's APK Signing Block, for fixtures broken after signing: an ID-value pair removed,
// or one byte of a signer's content digest or signature flipped in a v2, v3 or v3.1 block. Layouts as in
// source.android.com "APK Signature Scheme v2/v3": little-endian, uint32-length-prefixed sequences.

export const BLOCK_ID = { v2: 0x7109871a, v3: 0xf05368c0, 'v3.1': 0x1b93ad61 } as const;
export type SchemeBlock = keyof typeof BLOCK_ID;
/** The pair apksig fills the block with so that it ends on a 4 KiB page (ApkSigningBlockUtils.VERITY_PADDING_BLOCK_ID). */
export const PADDING_ID = 0x42726577;

type Span = { start: number; end: number };
export type SigningBlockPair = { id: number; /** the pair with its uint64 length */ pair: Span; /** the value after the id */ value: Span };
export type SigningBlockLayout = { blockOffset: number; cdOffset: number; eocdOffset: number; pairs: SigningBlockPair[] };

/** The APK Signing Block of a zip (without zip64 or a comment longer than the EOCD search allows), or null. */
export function signingBlockLayout(apk: Buffer): SigningBlockLayout | null {
  let eocdOffset = -1;
  for (let at = apk.length - 22; at >= Math.max(0, apk.length - 22 - 0xffff); at--) {
    if (apk.readUInt32LE(at) === 0x06054b50 && at + 22 + apk.readUInt16LE(at + 20) === apk.length) {
      eocdOffset = at;
      break;
    }
  }
  if (eocdOffset < 0) throw new Error('no end of central directory');
  const cdOffset = apk.readUInt32LE(eocdOffset + 16);
  if (cdOffset < 32 || apk.toString('latin1', cdOffset - 16, cdOffset) !== 'APK Sig Block 42') return null;
  const size = Number(apk.readBigUInt64LE(cdOffset - 24));
  const blockOffset = cdOffset - size - 8;
  const pairs: SigningBlockPair[] = [];
  for (let at = blockOffset + 8; at < cdOffset - 24;) {
    const len = Number(apk.readBigUInt64LE(at));
    pairs.push({ id: apk.readUInt32LE(at + 8), pair: { start: at, end: at + 8 + len }, value: { start: at + 12, end: at + 8 + len } });
    at += 8 + len;
  }
  return { blockOffset, cdOffset, eocdOffset, pairs };
}

/**
 * Removes one ID-value pair. When the block has apksig's padding pair, the padding grows by the bytes removed, so the
 * block keeps its size and page alignment and no offset in the file changes; otherwise the block shrinks and its two
 * size fields and the EOCD's central directory offset follow. Either way the content digests still match: only the
 * remaining schemes' own stripping protections can tell. Null when there is no such pair.
 */
export function dropPair(apk: Buffer, id: number): Buffer | null {
  const layout = signingBlockLayout(apk);
  const victim = layout?.pairs.find((p) => p.id === id);
  if (!layout || !victim) return null;
  const removed = victim.pair.end - victim.pair.start;
  const padding = layout.pairs.find((p) => p.id === PADDING_ID && p.id !== id);
  const kept: Buffer[] = [];
  for (const p of layout.pairs) {
    if (p === victim) continue;
    const bytes = Buffer.from(apk.subarray(p.pair.start, p.pair.end));
    if (p === padding) {
      const grown = Buffer.concat([bytes, Buffer.alloc(removed)]);
      grown.writeBigUInt64LE(BigInt(grown.length - 8), 0);
      kept.push(grown);
    } else {
      kept.push(bytes);
    }
  }
  const pairs = Buffer.concat(kept);
  const size = Buffer.alloc(8);
  size.writeBigUInt64LE(BigInt(pairs.length + 24));
  const block = Buffer.concat([size, pairs, size, Buffer.from('APK Sig Block 42', 'latin1')]);
  const eocd = Buffer.from(apk.subarray(layout.eocdOffset));
  eocd.writeUInt32LE(layout.blockOffset + block.length, 16);
  return Buffer.concat([apk.subarray(0, layout.blockOffset), block, apk.subarray(layout.cdOffset, layout.eocdOffset), eocd]);
}

export type SignerPart = 'digest' | 'signature';

/**
 * Flips the last byte of signer #1's content digest or signature in a scheme block: the record of `algorithmId`,
 * or the first record when none is given. Returns the copy and the algorithm of the record, or null when the block or
 * the record is missing.
 */
export function flipSignerRecord(apk: Buffer, scheme: SchemeBlock, part: SignerPart, algorithmId?: number): { bytes: Buffer; algorithmId: number } | null {
  const value = signingBlockLayout(apk)?.pairs.find((p) => p.id === BLOCK_ID[scheme])?.value;
  if (!value) return null;
  const signer = items(apk, prefixed(apk, value.start))[0];
  const signedData = prefixed(apk, signer.start);
  // v3 and v3.1 signers carry minSdk and maxSdk (8 bytes) between the signed data and the signatures.
  const signatures = prefixed(apk, signedData.end + (scheme === 'v2' ? 0 : 8));
  const records = part === 'digest' ? items(apk, prefixed(apk, signedData.start)) : items(apk, signatures);
  const record = records.find((r) => algorithmId === undefined || apk.readUInt32LE(r.start) === algorithmId);
  if (!record) return null;
  const out = Buffer.from(apk);
  out[prefixed(apk, record.start + 4).end - 1] ^= 0x01;
  return { bytes: out, algorithmId: apk.readUInt32LE(record.start) };
}

/** The algorithm ids of signer #1's content digests in a scheme block, in block order. */
export function signerDigestAlgorithms(apk: Buffer, scheme: SchemeBlock): number[] {
  const value = signingBlockLayout(apk)?.pairs.find((p) => p.id === BLOCK_ID[scheme])?.value;
  if (!value) return [];
  const signer = items(apk, prefixed(apk, value.start))[0];
  return items(apk, prefixed(apk, prefixed(apk, signer.start).start)).map((r) => apk.readUInt32LE(r.start));
}

function prefixed(buf: Buffer, at: number): Span {
  const len = buf.readUInt32LE(at);
  return { start: at + 4, end: at + 4 + len };
}

function items(buf: Buffer, seq: Span): Span[] {
  const out: Span[] = [];
  for (let at = seq.start; at < seq.end;) {
    const item = prefixed(buf, at);
    out.push(item);
    at = item.end;
  }
  return out;
}
