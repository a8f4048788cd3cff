import { createHash, type Hash } from 'node:crypto';
import { createInflateRaw, inflateRawSync } from 'node:zlib';
import { LimitExceededError } from '../package/errors';
import { LIMITS } from '../package/limits';
import { directoryRecordAt } from '../package/central-directory';
import { MalformedApkError, readAt, type ApkSections } from './apk-sections';

/** One central-directory record, as apksig's CentralDirectoryRecord reads it. */
export type CdRecord = {
  name: string;
  /** Length of the name in the central directory, in bytes. */
  nameBytes: number;
  method: number;
  flags: number;
  crc: number;
  compressedSize: number;
  uncompressedSize: number;
  localHeaderOffset: number;
};

const LOCAL_SIGNATURE = 0x04034b50;
/** Compressed bytes inflated in one call; larger entries are inflated in slices (see entryDigest). */
const WHOLE_ENTRY_MAX = 8 * 1024 * 1024;
/** Bytes read from the file at a time while digesting. */
export const READ_CHUNK = 4 * 1024 * 1024;

/**
 * Read buffers of READ_CHUNK bytes, kept for the next digest. A fresh buffer per entry is garbage that V8 frees only
 * when external memory presses it: a package of 32 stored 16 MiB entries left 128 MiB of them behind, and the
 * analysis's peak RSS grew by 60 MB on Node 24 (bench:scan). Taken and given back by each reader, so analyses that
 * interleave in one thread never share one; at most two are kept.
 */
const spareBuffers: Buffer[] = [];
export async function withReadBuffer<T>(use: (buffer: Buffer) => Promise<T>): Promise<T> {
  const buffer = spareBuffers.pop() ?? Buffer.allocUnsafe(READ_CHUNK);
  try {
    return await use(buffer);
  } finally {
    if (spareBuffers.length < 2) spareBuffers.push(buffer);
  }
}

/** Every record of the central directory, directories left out (as apksig's parseZipCentralDirectory does). */
export async function readCentralDirectory(s: ApkSections): Promise<CdRecord[]> {
  if (s.cdSize > LIMITS.centralDirectory) {
    throw new LimitExceededError('centralDirectory', `the central directory is ${s.cdSize} bytes, over the ${LIMITS.centralDirectory}-byte limit`);
  }
  const cd = await readAt(s.fh, s.cdOffset, s.cdSize);
  if (cd.length < s.cdSize) throw new MalformedApkError('the central directory runs past the end of the file');
  const out: CdRecord[] = [];
  let p = 0;
  for (let i = 0; i < s.cdRecordCount; i++) {
    const found = directoryRecordAt(cd, p);
    if (typeof found === 'string') throw new MalformedApkError(`central directory record #${i + 1} ${found}`);
    const { record: r, end } = found;
    // apksig decodes names as UTF-8 and leaves directories out.
    const name = r.nameBytes.toString('utf8');
    if (!name.endsWith('/')) {
      out.push({
        name,
        nameBytes: r.nameBytes.length,
        flags: r.generalPurposeBitFlag,
        method: r.compressionMethod,
        crc: r.crc32,
        compressedSize: r.compressedSize,
        uncompressedSize: r.uncompressedSize,
        localHeaderOffset: r.relativeOffsetOfLocalHeader,
      });
    }
    p = end;
  }
  return out;
}

/** General-purpose flag bit 3: sizes and CRC follow the data, in a data descriptor. */
const DATA_DESCRIPTOR_FLAG = 0x08;

/**
 * Where an entry's data lies, after the checks apksig's LocalFileRecord.getRecord makes (it mimics what Android reads
 * when it verifies signatures): the local header inside the file before the central directory, its signature, its
 * data-descriptor flag equal to the central directory's, its CRC-32 and sizes equal to the central directory's when
 * no descriptor follows the data, its name the same, the data (a stored entry's uncompressed size, a compressed
 * entry's compressed size) ending before the central directory.
 */
export async function localRecord(s: ApkSections, r: CdRecord): Promise<{ dataStart: number; dataEnd: number }> {
  const headerEnd = r.localHeaderOffset + 30 + r.nameBytes;
  if (headerEnd > s.cdOffset) throw new MalformedApkError(`${r.name}: the local file header extends beyond the start of the central directory`);
  const header = await readAt(s.fh, r.localHeaderOffset, 30 + r.nameBytes);
  if (header.length < 30 + r.nameBytes || header.readUInt32LE(0) !== LOCAL_SIGNATURE) throw new MalformedApkError(`${r.name}: no local file header`);
  const descriptor = (header.readUInt16LE(6) & DATA_DESCRIPTOR_FLAG) !== 0;
  if (descriptor !== ((r.flags & DATA_DESCRIPTOR_FLAG) !== 0)) {
    throw new MalformedApkError(`${r.name}: the local file header and the central directory disagree on a data descriptor`);
  }
  if (!descriptor) {
    const local = { crc: header.readUInt32LE(14), compressedSize: header.readUInt32LE(18), uncompressedSize: header.readUInt32LE(22) };
    for (const field of ['crc', 'compressedSize', 'uncompressedSize'] as const) {
      if (local[field] !== r[field]) throw new MalformedApkError(`${r.name}: the local file header's ${field} (${local[field]}) differs from the central directory's (${r[field]})`);
    }
  }
  const nameLength = header.readUInt16LE(26);
  if (nameLength > r.nameBytes || header.toString('utf8', 30, 30 + nameLength) !== r.name) {
    throw new MalformedApkError(`${r.name}: the local file header names another entry`);
  }
  const dataStart = r.localHeaderOffset + 30 + nameLength + header.readUInt16LE(28);
  // A stored entry is as long as its uncompressed size, whatever the compressed size says (apksig and Android alike).
  const dataEnd = dataStart + (r.method === 0 ? r.uncompressedSize : r.compressedSize);
  if (dataEnd > s.cdOffset) throw new MalformedApkError(`${r.name}: data extends beyond the start of the central directory`);
  // The data descriptor itself is never read: apksig reads entries for verification with getRecord(..., false, false),
  // which neither reads it nor checks where it ends, so a descriptor running into the central directory changes no verdict.
  return { dataStart, dataEnd };
}

/**
 * Feeds an entry's uncompressed data to `hashes` (apksig's LocalFileRecord.outputUncompressedData) from where
 * localRecord finds it: STORED copied, any other method inflated as DEFLATE. Inflation stops at the declared size, so a
 * bomb costs what it declares; LIMITS.signedContentBytes caps what all entries of a package may declare together
 * (see JarBudget).
 */
export async function digestEntry(s: ApkSections, r: CdRecord, hashes: Sink[], budget: JarBudget): Promise<void> {
  const { dataStart, dataEnd } = await localRecord(s, r);
  // Any method but STORED is inflated as DEFLATE, as apksig does (its own weird-compression-method.apk verifies).
  budget.spend(r.uncompressedSize, r.name);
  if (r.method === 0) {
    // Hashes take each slice before the next read, so one buffer serves all of them; a collecting sink copies.
    return withReadBuffer(async (buffer) => {
      for (let at = dataStart; at < dataEnd; at += READ_CHUNK) {
        const { bytesRead } = await s.fh.read(buffer, 0, Math.min(READ_CHUNK, dataEnd - at), at);
        if (bytesRead === 0) throw new MalformedApkError(`${r.name}: data truncated`);
        const slice = buffer.subarray(0, bytesRead);
        for (const h of hashes) h.update(slice);
        if (bytesRead < Math.min(READ_CHUNK, dataEnd - at)) throw new MalformedApkError(`${r.name}: data truncated`);
      }
    });
  }
  if (r.compressedSize <= WHOLE_ENTRY_MAX) {
    const data = inflate(await readAt(s.fh, dataStart, r.compressedSize), r);
    for (const h of hashes) h.update(data);
  } else {
    await inflateStreamed(s, r, dataStart, dataEnd, hashes);
  }
}

function inflate(compressed: Buffer, r: CdRecord): Buffer {
  try {
    // maxOutputLength: a bomb stops at what it declared (plus one byte, so a longer stream is told apart).
    const out = inflateRawSync(compressed, { maxOutputLength: Math.max(1, r.uncompressedSize + 1) });
    if (out.length !== r.uncompressedSize) throw new MalformedApkError(`${r.name}: inflated size ${out.length} differs from the declared ${r.uncompressedSize}`);
    return out;
  } catch (err) {
    if (err instanceof MalformedApkError) throw err;
    throw new MalformedApkError(`${r.name}: data does not inflate (${(err as Error).message})`);
  }
}

/** Large deflated entries: inflated slice by slice through a stream, so memory stays at a slice. */
async function inflateStreamed(s: ApkSections, r: CdRecord, dataStart: number, dataEnd: number, hashes: Sink[]): Promise<void> {
  const inflater = createInflateRaw();
  let produced = 0;
  let failure: Error | null = null;
  inflater.on('data', (chunk: Buffer) => {
    produced += chunk.length;
    if (produced > r.uncompressedSize) {
      failure ??= new MalformedApkError(`${r.name}: inflates past its declared ${r.uncompressedSize} bytes`);
      inflater.destroy();
      return;
    }
    for (const h of hashes) h.update(chunk);
  });
  const ended = new Promise<void>((resolve) => {
    inflater.on('end', resolve);
    inflater.on('close', resolve);
    inflater.on('error', (err) => {
      failure ??= new MalformedApkError(`${r.name}: data does not inflate (${err.message})`);
      resolve();
    });
  });
  for (let at = dataStart; at < dataEnd && !failure; at += READ_CHUNK) {
    const slice = await readAt(s.fh, at, Math.min(READ_CHUNK, dataEnd - at));
    if (slice.length === 0) throw new MalformedApkError(`${r.name}: data truncated`);
    // Wait for the inflater to take each slice, so at most one slice and its output are held at a time.
    if (!inflater.write(slice)) await new Promise((resolve) => { inflater.once('drain', resolve); inflater.once('close', resolve); });
  }
  inflater.end();
  await ended;
  if (failure) throw failure;
  if (produced !== r.uncompressedSize) throw new MalformedApkError(`${r.name}: inflated size ${produced} differs from the declared ${r.uncompressedSize}`);
}

/** What entry data is fed to: a hash, or a collector. */
export type Sink = { update(data: Buffer): unknown };

/** An entry's uncompressed data whole, refused past `max` declared bytes (the caps of limits.ts). */
export async function readEntry(s: ApkSections, r: CdRecord, max: number, budget: JarBudget): Promise<Buffer> {
  if (r.uncompressedSize > max) throw new LimitExceededError('manifest', `${r.name} declares ${r.uncompressedSize} bytes, over the ${max}-byte limit`);
  const parts: Buffer[] = [];
  await digestEntry(s, r, [{ update: (b: Buffer) => parts.push(Buffer.from(b)) }], budget);
  return Buffer.concat(parts);
}

/** Total bytes the JAR check may hash across entries, so a package of many declared-huge entries stops early. */
export class JarBudget {
  private left = LIMITS.signedContentBytes;
  spend(bytes: number, name: string): void {
    this.left -= bytes;
    if (this.left < 0) {
      throw new LimitExceededError('signedContentBytes', `the signed entries declare over ${LIMITS.signedContentBytes} bytes to digest (reached at ${name})`);
    }
  }
}

/** A fresh digest per JCA name apksig uses. */
export function jcaHash(name: string): Hash {
  return createHash(name.replace('-', '').toLowerCase());
}
