import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { LIMITS } from '../package/limits';
import type { EntryRecord, PackageZip } from '../package/zip-reader';
import { PT_DYNAMIC } from './elf-constants';
import { Fields, MalformedElfError, type ElfSource } from './elf-view';

/** One library's bytes: its digest, where a stored one lies in the package, and random access for the ELF reader. */
export type LibraryBytes = { sha256: string; size: number; dataOffset: number | null; source: ElfSource };

/** Bytes read from the package per call while hashing a stored library: large reads, one buffer reused. */
const READ_CHUNK = 1024 * 1024;
/**
 * Leading bytes of a deflated library kept while it streams: the header, program headers, hash tables, dynamic
 * symbols and strings that linkers put first are under 1 MB for nearly every library.
 */
const PREFIX_BYTES = 1024 * 1024;
/** Bytes kept from a further pass over a deflated library, from the first byte the reader missed. */
const WINDOW_BYTES = 4 * 1024 * 1024;
/** Further passes over one deflated library before it is reported as unreadable (real layouts need at most one). */
const MAX_PASSES = 4;

/**
 * Where a stored entry's data starts: after its local header, whose name and extra lengths may differ from the
 * central directory's (zipalign pads the local extra field). Null when the local header is not where it should be.
 */
export async function storedDataOffset(fh: FileHandle, fileSize: number, record: EntryRecord): Promise<number | null> {
  const at = record.relativeOffsetOfLocalHeader;
  if (at + 30 > fileSize) return null;
  const head = Buffer.alloc(30);
  await fh.read(head, 0, 30, at);
  if (head.readUInt32LE(0) !== 0x04034b50) return null;
  const offset = at + 30 + head.readUInt16LE(26) + head.readUInt16LE(28);
  return offset + record.compressedSize <= fileSize ? offset : null;
}

/**
 * A library's bytes, read once for its SHA-256. A stored entry (what AGP writes for libraries since
 * useLegacyPackaging false, and what 16 KB pages require) is read in place by offset, and the reader's ranges come
 * from the package file again (the page cache has them). A deflated one is inflated once, keeping its first
 * PREFIX_BYTES and its PT_DYNAMIC segment; a range outside them costs one more inflation (at most MAX_PASSES).
 */
export async function libraryBytes(zip: PackageZip, fh: FileHandle, fileSize: number, record: EntryRecord): Promise<LibraryBytes> {
  const dataOffset = record.compressionMethod === 0 && record.compressedSize === record.uncompressedSize ? await storedDataOffset(fh, fileSize, record) : null;
  if (dataOffset !== null) return stored(fh, record.uncompressedSize, dataOffset);
  return deflated(zip, record);
}

async function stored(fh: FileHandle, size: number, dataOffset: number): Promise<LibraryBytes> {
  const digest = createHash('sha256');
  const buf = Buffer.allocUnsafe(Math.min(READ_CHUNK, Math.max(size, 1)));
  for (let pos = 0; pos < size; ) {
    const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, size - pos), dataOffset + pos);
    if (bytesRead === 0) throw new MalformedElfError('the package ends inside the library');
    digest.update(buf.subarray(0, bytesRead));
    pos += bytesRead;
  }
  const source: ElfSource = {
    size,
    async read(offset, length) {
      const out = Buffer.alloc(length);
      const { bytesRead } = await fh.read(out, 0, length, dataOffset + offset);
      if (bytesRead !== length) throw new MalformedElfError('the package ends inside the library');
      return out;
    },
  };
  return { sha256: digest.digest('hex'), size, dataOffset, source };
}

type Kept = { start: number; bytes: Buffer };

async function deflated(zip: PackageZip, record: EntryRecord): Promise<LibraryBytes> {
  const size = record.uncompressedSize;
  const digest = createHash('sha256');
  const prefix = Buffer.alloc(Math.min(size, PREFIX_BYTES));
  let dynamic: Kept | null = null;
  let dynamicRange: [number, number] | null | undefined;
  await zip.stream(record.name, 'nativeLibraryBytes', LIMITS.nativeLibraryBytes, (chunk, offset) => {
    digest.update(chunk);
    if (offset < prefix.length) chunk.copy(prefix, offset, 0, Math.min(chunk.length, prefix.length - offset));
    // Once the program headers are in, the dynamic segment (which linkers put after the code) is kept as it passes.
    if (dynamicRange === undefined && offset + chunk.length >= prefix.length) {
      dynamicRange = dynamicSegment(prefix, size);
      // The part of the segment already streamed is in the prefix.
      if (dynamicRange) dynamic = keep(null, dynamicRange, prefix, 0);
    }
    if (dynamicRange) dynamic = keep(dynamic, dynamicRange, chunk, offset);
  });
  const kept: Kept[] = [{ start: 0, bytes: prefix }];
  if (dynamic) kept.push(dynamic);
  let passes = 0;
  const source: ElfSource = {
    size,
    async read(offset, length) {
      const hit = kept.find((k) => offset >= k.start && offset + length <= k.start + k.bytes.length);
      if (hit) return hit.bytes.subarray(offset - hit.start, offset - hit.start + length);
      if (++passes > MAX_PASSES) throw new MalformedElfError(`its layout scatters what the reader needs over more than ${MAX_PASSES} passes of the deflated entry`);
      const range: [number, number] = [offset, Math.min(size, offset + Math.max(length, WINDOW_BYTES))];
      let window: Kept | null = null;
      await zip.stream(record.name, 'nativeLibraryBytes', LIMITS.nativeLibraryBytes, (chunk, at) => {
        window = keep(window, range, chunk, at);
        return at + chunk.length < range[1];
      });
      const got = window as Kept | null;
      if (!got || got.bytes.length < length) throw new MalformedElfError('the deflated entry ends before the range read');
      kept.splice(1, kept.length - 1, ...(dynamic ? [dynamic] : []), got); // one window at a time
      return got.bytes.subarray(0, length);
    },
  };
  return { sha256: digest.digest('hex'), size, dataOffset: null, source };
}

/** Copies the part of `chunk` (at `offset` in the file) that falls in `range` into the kept buffer. */
function keep(into: Kept | null, range: [number, number], chunk: Buffer, offset: number): Kept | null {
  const from = Math.max(range[0], offset);
  const to = Math.min(range[1], offset + chunk.length);
  if (from >= to) return into;
  const k = into ?? { start: range[0], bytes: Buffer.alloc(range[1] - range[0]) };
  chunk.copy(k.bytes, from - k.start, from - offset, to - offset);
  return k;
}

/**
 * The PT_DYNAMIC segment's file range read from the program headers in the prefix, when they are there and it is
 * small enough to keep (null otherwise: the reader then finds it in a further pass, or refuses the file).
 */
function dynamicSegment(prefix: Buffer, size: number): [number, number] | null {
  if (prefix.length < 52 || prefix.readUInt32BE(0) !== 0x7f454c46) return null;
  const is64 = prefix[4] === 2;
  const f = new Fields(prefix, prefix[5] !== 2);
  try {
    const phoff = is64 ? f.word(32) : f.u32(28);
    const phentsize = f.u16(is64 ? 54 : 42);
    const phnum = Math.min(f.u16(is64 ? 56 : 44), LIMITS.elfProgramHeaders);
    for (let i = 0; i < phnum; i++) {
      const at = phoff + i * phentsize;
      if (f.u32(at) !== PT_DYNAMIC) continue;
      const offset = is64 ? f.word(at + 8) : f.u32(at + 4);
      const filesz = Math.min(is64 ? f.word(at + 32) : f.u32(at + 16), LIMITS.elfDynamicEntries * (is64 ? 16 : 8));
      return offset < size ? [offset, Math.min(size, offset + filesz)] : null;
    }
  } catch (err) {
    if (!(err instanceof MalformedElfError)) throw err;
  }
  return null;
}
