/**
 * The central directory of a package, found and walked as Android's zip library (libziparchive) does, so the
 * analysis reads the entries the device reads: the end record is the last signature in the file's tail and its
 * comment must end the file; a Zip64 end record is looked for only when a field of the end record is saturated
 * (0xFFFF / 0xFFFFFFFF), never because a locator happens to precede the end record; disk numbers are ignored;
 * the central directory may not overlap the end record, and bytes between them are allowed. Every record is bounded
 * by the directory, every count by LIMITS; a malformed directory is UnreadablePackageError, never a thrown
 * RangeError.
 */
import type { FileHandle } from 'node:fs/promises';
import { LimitExceededError, UnreadablePackageError } from './errors';
import { LIMITS } from './limits';

const EOCD_SIGNATURE = 0x06054b50;
const EOCD_SIZE = 22;
const ZIP64_LOCATOR_SIGNATURE = 0x07064b50;
const ZIP64_LOCATOR_SIZE = 20;
const ZIP64_EOCD_SIGNATURE = 0x06064b50;
const ZIP64_EOCD_SIZE = 56;
const CD_SIGNATURE = 0x02014b50;
const CD_RECORD_SIZE = 46;
const ZIP64_EXTRA = 0x0001;
const MAX_COMMENT = 0xffff;

/** One central-directory record, with its name's raw bytes (decoded by the caller). */
export type DirectoryRecord = {
  nameBytes: Buffer;
  versionMadeBy: number;
  generalPurposeBitFlag: number;
  compressionMethod: number;
  crc32: number;
  compressedSize: number;
  uncompressedSize: number;
  externalFileAttributes: number;
  relativeOffsetOfLocalHeader: number;
};

/** Where the central directory is and how many records it holds. */
export type DirectoryLocation = { offset: number; size: number; count: number };

/** Finds the central directory as libziparchive's MapCentralDirectory does. */
export async function locateCentralDirectory(fh: FileHandle, fileSize: number): Promise<DirectoryLocation> {
  if (fileSize < EOCD_SIZE) throw notZip(`${fileSize} bytes is shorter than an end-of-central-directory record`);
  const tailLength = Math.min(fileSize, EOCD_SIZE + MAX_COMMENT);
  const tailStart = fileSize - tailLength;
  const tail = await readExactly(fh, tailStart, tailLength);
  let i = tail.length - EOCD_SIZE;
  while (i >= 0 && tail.readUInt32LE(i) !== EOCD_SIGNATURE) i--;
  if (i < 0) throw notZip('no end-of-central-directory record');
  const eocdOffset = tailStart + i;
  const eocd = tail.subarray(i);
  if (eocdOffset + EOCD_SIZE + eocd.readUInt16LE(20) !== fileSize) {
    throw notZip(`${fileSize - eocdOffset - EOCD_SIZE - eocd.readUInt16LE(20)} extraneous bytes after the end-of-central-directory record and its comment`);
  }
  const saturated = eocd.readUInt16LE(8) === 0xffff || eocd.readUInt16LE(10) === 0xffff || eocd.readUInt32LE(12) === 0xffffffff ||
    eocd.readUInt32LE(16) === 0xffffffff || eocd.readUInt16LE(20) === 0xffff;
  const found = saturated
    ? await zip64Location(fh, eocdOffset)
    : { count: eocd.readUInt16LE(10), size: eocd.readUInt32LE(12), offset: eocd.readUInt32LE(16), end: eocdOffset };
  if (found.offset + found.size > found.end) throw notZip(`the central directory (offset ${found.offset}, ${found.size} bytes) overlaps the end records at ${found.end}`);
  if (found.count === 0) throw notZip('the archive is empty');
  if (found.count > LIMITS.zipEntries) throw tooManyEntries(found.count);
  if (found.size > LIMITS.centralDirectory) {
    throw new LimitExceededError('centralDirectory', `the central directory is ${found.size} bytes, over the ${LIMITS.centralDirectory}-byte limit`);
  }
  return { offset: found.offset, size: found.size, count: found.count };
}

/** The Zip64 end record the locator before the end record names (libziparchive FindCentralDirectoryInfoForZip64). */
async function zip64Location(fh: FileHandle, eocdOffset: number): Promise<DirectoryLocation & { end: number }> {
  const locatorOffset = eocdOffset - ZIP64_LOCATOR_SIZE;
  if (locatorOffset < 0) throw notZip('a saturated end record without room for a Zip64 locator');
  const locator = await readExactly(fh, locatorOffset, ZIP64_LOCATOR_SIZE);
  if (locator.readUInt32LE(0) !== ZIP64_LOCATOR_SIGNATURE) throw notZip('a saturated end record without a Zip64 locator');
  const recordOffset = safeNumber(locator.readBigUInt64LE(8));
  if (recordOffset + ZIP64_EOCD_SIZE > locatorOffset) throw notZip('the Zip64 end record overlaps its locator');
  const record = await readExactly(fh, recordOffset, ZIP64_EOCD_SIZE);
  if (record.readUInt32LE(0) !== ZIP64_EOCD_SIGNATURE) throw notZip('the Zip64 locator points at no Zip64 end record');
  return {
    count: safeNumber(record.readBigUInt64LE(32)),
    size: safeNumber(record.readBigUInt64LE(40)),
    offset: safeNumber(record.readBigUInt64LE(48)),
    end: recordOffset,
  };
}

/**
 * Walks `count` records of the directory at `at` (libziparchive ParseZipArchive), calling `visit` with each; the
 * Zip64 extended-information field supplies the sizes and offset the record saturates. A record's local header
 * must start before the central directory.
 */
export async function walkCentralDirectory(fh: FileHandle, at: DirectoryLocation, visit: (record: DirectoryRecord) => void): Promise<void> {
  const cd = await readExactly(fh, at.offset, at.size);
  let p = 0;
  for (let i = 0; i < at.count; i++) {
    const found = directoryRecordAt(cd, p);
    if (typeof found === 'string') throw notZip(`central directory record #${i + 1} ${found}`);
    const { record, extra, end } = found;
    applyZip64Extra(record, extra, i);
    if (record.relativeOffsetOfLocalHeader >= at.offset) throw notZip(`central directory record #${i + 1} names a local header inside the central directory`);
    visit(record);
    p = end;
  }
}

/**
 * The central-directory record at `p` of `cd`, its extra field and where the next one starts, as the record's own
 * 32-bit fields say (no Zip64 field applied); a string says what is wrong with it. Shared by this reader and the
 * signature verifier's (signing/zip-entries.ts), which read the same records under different rules.
 */
export function directoryRecordAt(cd: Buffer, p: number): { record: DirectoryRecord; extra: Buffer; end: number } | string {
  if (p + CD_RECORD_SIZE > cd.length || cd.readUInt32LE(p) !== CD_SIGNATURE) return 'is malformed or missing';
  const nameLength = cd.readUInt16LE(p + 28);
  const extraStart = p + CD_RECORD_SIZE + nameLength;
  const extraEnd = extraStart + cd.readUInt16LE(p + 30);
  const end = extraEnd + cd.readUInt16LE(p + 32);
  if (end > cd.length) return 'runs past the central directory';
  return {
    record: {
      nameBytes: Buffer.from(cd.subarray(p + CD_RECORD_SIZE, extraStart)),
      versionMadeBy: cd.readUInt16LE(p + 4),
      generalPurposeBitFlag: cd.readUInt16LE(p + 8),
      compressionMethod: cd.readUInt16LE(p + 10),
      crc32: cd.readUInt32LE(p + 16),
      compressedSize: cd.readUInt32LE(p + 20),
      uncompressedSize: cd.readUInt32LE(p + 24),
      externalFileAttributes: cd.readUInt32LE(p + 38),
      relativeOffsetOfLocalHeader: cd.readUInt32LE(p + 42),
    },
    extra: cd.subarray(extraStart, extraEnd),
    end,
  };
}

/** Replaces the saturated sizes and offset of a record by the Zip64 extended-information field's, in its order. */
function applyZip64Extra(record: DirectoryRecord, extra: Buffer, index: number): void {
  const wants = (['uncompressedSize', 'compressedSize', 'relativeOffsetOfLocalHeader'] as const).filter((k) => record[k] === 0xffffffff);
  if (wants.length === 0) return;
  for (let p = 0; p + 4 <= extra.length; ) {
    const id = extra.readUInt16LE(p);
    const size = extra.readUInt16LE(p + 2);
    if (p + 4 + size > extra.length) break;
    if (id === ZIP64_EXTRA) {
      if (size < wants.length * 8) throw notZip(`central directory record #${index + 1} has a Zip64 field too short for what it saturates`);
      wants.forEach((k, j) => { record[k] = safeNumber(extra.readBigUInt64LE(p + 4 + j * 8)); });
      return;
    }
    p += 4 + size;
  }
  throw notZip(`central directory record #${index + 1} saturates a size or offset without a Zip64 field`);
}

async function readExactly(fh: FileHandle, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  const { bytesRead } = await fh.read(buf, 0, length, position);
  if (bytesRead < length) throw notZip(`the file ends inside the zip structure at ${position}`);
  return buf;
}

function safeNumber(v: bigint): number {
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw notZip('a Zip64 size or offset beyond any file');
  return Number(v);
}

function notZip(why: string): UnreadablePackageError {
  return new UnreadablePackageError('not-zip', `not a zip archive: ${why}`);
}

export function tooManyEntries(count: number): LimitExceededError {
  return new LimitExceededError('zipEntries', `the archive holds ${count} or more entries, over the ${LIMITS.zipEntries}-entry limit`);
}
