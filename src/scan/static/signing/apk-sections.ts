import { open, type FileHandle } from 'node:fs/promises';
import { LimitExceededError } from '../package/errors';
import { LIMITS } from '../package/limits';

/** A ZIP (APK) the signature verifier is looking at: random access to its bytes, and where its sections are. */
export type ApkSections = {
  fh: FileHandle;
  size: number;
  /** Start of the central directory, as the end-of-central-directory record says. */
  cdOffset: number;
  cdSize: number;
  cdRecordCount: number;
  eocdOffset: number;
  /** The end-of-central-directory record with its comment: the third section of the content digest. */
  eocd: Buffer;
  /** The APK Signing Block, when one sits right before the central directory. */
  signingBlock: SigningBlock | null;
};

/** The APK Signing Block: where it starts, and its ID-value pairs (or why they could not be read). */
export type SigningBlock = { offset: number; pairs: Map<number, Buffer> };

/** The file is not a ZIP archive apksigner would read (it answers "Malformed APK" and verifies nothing). */
export class MalformedApkError extends Error {
  override readonly name = 'MalformedApkError';
}

const EOCD_SIGNATURE = 0x06054b50;
const EOCD_MIN = 22;
const MAX_COMMENT = 0xffff;
const MAGIC = Buffer.from('APK Sig Block 42', 'latin1');

/** Reads `length` bytes at `position`; a short read means the file ends there. */
export async function readAt(fh: FileHandle, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  const { bytesRead } = await fh.read(buf, 0, length, position);
  return bytesRead === length ? buf : buf.subarray(0, bytesRead);
}

/** Opens a package and finds its sections as apksig's ApkUtils.findZipSections does. The caller closes `fh`. */
export async function openApkSections(filePath: string): Promise<ApkSections> {
  const fh = await open(filePath, 'r');
  try {
    return await findSections(fh);
  } catch (err) {
    await fh.close();
    throw err;
  }
}

async function findSections(fh: FileHandle): Promise<ApkSections> {
  const { size } = await fh.stat();
  const tailLength = Math.min(size, EOCD_MIN + MAX_COMMENT);
  const tail = await readAt(fh, size - tailLength, tailLength);
  // The record whose comment length reaches exactly the end of the file, nearest the end (as apksig looks for it).
  let p = -1;
  for (let q = tail.length - EOCD_MIN; q >= 0; q--) {
    if (tail.readUInt32LE(q) === EOCD_SIGNATURE && q + EOCD_MIN + tail.readUInt16LE(q + 20) === tail.length) {
      p = q;
      break;
    }
  }
  if (p < 0) throw new MalformedApkError('not a ZIP archive: no end of central directory record');
  const eocdOffset = size - tailLength + p;
  const eocd = Buffer.from(tail.subarray(p));
  const cdRecordCount = eocd.readUInt16LE(10);
  const cdSize = eocd.readUInt32LE(12);
  const cdOffset = eocd.readUInt32LE(16);
  // ZIP64 is refused by apksig too ("ZIP64 APK not supported").
  if (cdOffset === 0xffffffff || cdSize === 0xffffffff || cdRecordCount === 0xffff) throw new MalformedApkError('ZIP64 archives are not APKs');
  // Only overlap is refused, as apksig and Android's zip library refuse it: bytes between the central directory and
  // the end record (a ZIP64 locator, a second end record, padding) are allowed, and no signature covers them.
  if (cdOffset > eocdOffset) throw new MalformedApkError(`the central directory starts (${cdOffset}) after the end-of-central-directory record (${eocdOffset})`);
  if (cdOffset + cdSize > eocdOffset) {
    throw new MalformedApkError(`the central directory (offset ${cdOffset}, ${cdSize} bytes) overlaps the end-of-central-directory record at ${eocdOffset}`);
  }
  if (cdRecordCount > LIMITS.zipEntries) {
    throw new LimitExceededError('zipEntries', `the archive declares ${cdRecordCount} entries, over the ${LIMITS.zipEntries}-entry limit`);
  }
  // apksig looks for the APK Signing Block only when the end record follows the central directory at once; with bytes
  // between them the package has no block (SignatureNotFoundException), and its verdict rests on what else it has.
  const signingBlock = cdOffset + cdSize === eocdOffset ? await findSigningBlock(fh, cdOffset) : null;
  return { fh, size, cdOffset, cdSize, cdRecordCount, eocdOffset, eocd, signingBlock };
}

/**
 * The APK Signing Block before the central directory (apksig's findApkSigningBlock), or null when there is none. A
 * block whose sizes are out of range or disagree is no block either: apksig ends such a search with
 * SignatureNotFoundException, and the platform then judges the package by its JAR signature.
 */
async function findSigningBlock(fh: FileHandle, cdOffset: number): Promise<SigningBlock | null> {
  if (cdOffset < 32) return null;
  const footer = await readAt(fh, cdOffset - 24, 24);
  if (footer.length < 24 || !footer.subarray(8).equals(MAGIC)) return null;
  const sizeInFooter = Number(footer.readBigUInt64LE(0));
  if (sizeInFooter < 24 || sizeInFooter > 0x7fffffff - 8) return null;
  const offset = cdOffset - sizeInFooter - 8;
  if (offset < 0) return null;
  if (sizeInFooter > LIMITS.signingBlock) {
    throw new LimitExceededError('signingBlock', `the APK Signing Block declares ${sizeInFooter} bytes, over the ${LIMITS.signingBlock}-byte limit`);
  }
  const block = await readAt(fh, offset, sizeInFooter + 8);
  if (Number(block.readBigUInt64LE(0)) !== sizeInFooter) return null;
  return { offset, pairs: readPairs(block.subarray(8, block.length - 24)) };
}

/**
 * The ID-value pairs up to the first malformed one: apksig walks the pairs in order looking for a scheme's ID, so a
 * block after a malformed pair is never found (SignatureNotFoundException) and the APK is judged as if it had none.
 * Pairs past LIMITS.signingBlockPairs are not looked at.
 */
function readPairs(buf: Buffer): Map<number, Buffer> {
  const out = new Map<number, Buffer>();
  for (let p = 0; p < buf.length && out.size < LIMITS.signingBlockPairs; ) {
    if (buf.length - p < 8) return out;
    const len = Number(buf.readBigUInt64LE(p));
    if (len < 4 || len > buf.length - p - 8) return out;
    const id = buf.readUInt32LE(p + 8);
    if (!out.has(id)) out.set(id, buf.subarray(p + 12, p + 8 + len));
    p += 8 + len;
  }
  return out;
}
