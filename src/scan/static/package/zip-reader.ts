import { createHash } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { createInflateRaw } from 'node:zlib';
import { locateCentralDirectory, tooManyEntries, walkCentralDirectory } from './central-directory';
import { LimitExceededError, UnreadablePackageError } from './errors';
import { LIMITS, type LimitName } from './limits';

/** The entry-size caps of limits.ts, one per kind of entry read. */
export type EntryKind = Extract<LimitName, 'manifest' | 'resourceTable' | 'resourceXml' | 'signatureFile' | 'plist' | 'provisioningProfile'>;

/**
 * What is kept of a central-directory entry: its name and what reading it takes. Nothing of the record's bytes is
 * held (a record may carry 64 KB of extra field and 64 KB of comment): the name is a string decoded from its bytes,
 * everything else a number.
 */
export type EntryRecord = Readonly<{
  name: string;
  compressionMethod: number;
  generalPurposeBitFlag: number;
  compressedSize: number;
  uncompressedSize: number;
  relativeOffsetOfLocalHeader: number;
  /** Made-by host (high byte) and version: the external attributes carry a Unix mode when the host is 3 (Unix). */
  versionMadeBy: number;
  externalFileAttributes: number;
}>;

/**
 * Random access to the few entries of a package the analyser needs.
 * Only the central directory is walked; entry data is streamed only for entries that are read,
 * so memory does not grow with the size of the package.
 */
/** Bytes inflated per step (see stream). */
const INFLATE_STEP = 512 * 1024;
/** Bytes read from the package per call (see storedBytes): large enough that reads are not the cost of a scan. */
const READ_STEP = 1024 * 1024;

export class PackageZip {
  private constructor(
    private readonly kept: Map<string, EntryRecord>,
    /** Number of entries in the central directory, kept or not. */
    readonly entryCount: number,
    /** The package file, read by offset for the directory and entry data (see stream). */
    private readonly file: FileHandle,
    private readonly fileSize: number,
  ) {}

  /**
   * Opens a zip and remembers the entries whose name `keep` accepts, reading the central directory as Android's zip
   * library does (central-directory.ts); rejects with UnreadablePackageError or LimitExceededError.
   */
  static async open(filePath: string, keep: (name: string) => boolean): Promise<PackageZip> {
    let file: FileHandle;
    try {
      file = await open(filePath, 'r');
    } catch (err) {
      throw new UnreadablePackageError('io', `cannot open the package: ${(err as Error).message}`);
    }
    try {
      const { size } = await file.stat();
      const location = await locateCentralDirectory(file, size);
      const kept = new Map<string, EntryRecord>();
      let count = 0;
      await walkCentralDirectory(file, location, (record) => {
        if (++count > LIMITS.zipEntries) throw tooManyEntries(count);
        // First entry of a name wins, as with Android's package parser.
        const name = entryName(record.nameBytes);
        if (keep(name) && !kept.has(name)) {
          kept.set(name, {
            name,
            compressionMethod: record.compressionMethod,
            generalPurposeBitFlag: record.generalPurposeBitFlag,
            compressedSize: record.compressedSize,
            uncompressedSize: record.uncompressedSize,
            relativeOffsetOfLocalHeader: record.relativeOffsetOfLocalHeader,
            versionMadeBy: record.versionMadeBy,
            externalFileAttributes: record.externalFileAttributes,
          });
        }
      });
      return new PackageZip(kept, count, file, size);
    } catch (err) {
      await file.close().catch(() => undefined);
      throw err;
    }
  }

  /** The record kept for an entry the `keep` of open accepted. */
  entry(name: string): EntryRecord | undefined {
    return this.kept.get(name);
  }

  has(name: string): boolean {
    return this.kept.has(name);
  }

  /**
   * Whether the entry's bytes can be read at all: stored or deflated, not encrypted. The platform reads nothing else
   * (AssetManager, the linker, ART), yet apksigner verifies a package holding such an entry and it installs, so a
   * reader of what the package holds skips it rather than calling the whole package unreadable.
   */
  readable(name: string): boolean {
    const entry = this.kept.get(name);
    return !!entry && (entry.compressionMethod === 0 || entry.compressionMethod === 8) && !(entry.generalPurposeBitFlag & 0x1);
  }

  /** Names of the kept entries, in central-directory order. */
  names(): string[] {
    return [...this.kept.keys()];
  }

  /** Reads one entry whole, refusing anything larger than LIMITS[kind] before inflating it (see readWhole). */
  async read(name: string, kind: EntryKind): Promise<Buffer> {
    return this.readWhole(name, kind, LIMITS[kind]);
  }

  /**
   * Reads one entry whole into one buffer of its declared size, refusing anything larger than maxBytes before
   * inflating it; an entry that inflates to more or fewer bytes than it declares is refused (see stream).
   */
  async readWhole(name: string, kind: LimitName, maxBytes: number): Promise<Buffer> {
    const declared = this.kept.get(name)?.uncompressedSize ?? 0;
    const bytes = Buffer.allocUnsafe(Math.min(declared, maxBytes));
    let filled = 0;
    await this.stream(name, kind, maxBytes, (chunk, offset) => {
      chunk.copy(bytes, offset);
      filled = offset + chunk.length;
    });
    return bytes.subarray(0, filled);
  }

  /**
   * Streams one entry through `onChunk` (chunks in order, with the offset of their first byte) without holding it:
   * memory stays at one inflated chunk whatever the entry's size. `onChunk` returns false to stop early. Rejects
   * with LimitExceededError(kind) when the entry declares or inflates past maxBytes, and with UnreadablePackageError
   * when it inflates to another length than it declares.
   *
   * Entries are read here by offset in 1 MB blocks and inflated in 512 KB steps rather than through a zip library's stream (16 KB
   * reads and steps): each is a round trip to the thread pool, and with 16 KB ones the round trips, not inflation,
   * were most of the cost of reading 80 MB of DEX files.
   */
  async stream(name: string, kind: LimitName, maxBytes: number, onChunk: (chunk: Buffer, offset: number) => boolean | void): Promise<void> {
    const entry = this.kept.get(name);
    if (!entry) throw new UnreadablePackageError('missing-manifest', `entry ${name} not found`);
    if (entry.uncompressedSize > maxBytes) {
      throw new LimitExceededError(kind, `entry ${name} declares ${entry.uncompressedSize} bytes, over the ${maxBytes}-byte limit`);
    }
    const raw = Readable.from(this.storedBytes(entry), { objectMode: false });
    const stream: Readable = entry.compressionMethod === 8 ? raw.pipe(createInflateRaw({ chunkSize: INFLATE_STEP })) : raw;
    const destroy = () => {
      stream.destroy();
      raw.destroy();
    };
    await new Promise<void>((resolve, reject) => {
      let total = 0;
      let done = false;
      const finish = (err?: Error) => {
        if (done) return;
        done = true;
        if (err) reject(err);
        else resolve();
      };
      raw.on('error', (err: Error) => finish(err instanceof UnreadablePackageError ? err : asIo(name, err)));
      stream.on('data', (chunk: Buffer) => {
        if (done) return;
        const offset = total;
        total += chunk.length;
        if (total > maxBytes) {
          destroy();
          finish(new LimitExceededError(kind, `entry ${name} inflates past the ${maxBytes}-byte limit`));
          return;
        }
        if (total > entry.uncompressedSize) {
          destroy();
          finish(asIo(name, new Error(`inflates past its declared ${entry.uncompressedSize} bytes`)));
          return;
        }
        let more: boolean | void;
        try {
          more = onChunk(chunk, offset);
        } catch (err) {
          destroy();
          finish(err as Error);
          return;
        }
        if (more === false) {
          destroy();
          finish();
        }
      });
      stream.on('error', (err: Error) => finish(asIo(name, err)));
      stream.on('end', () => finish(total === entry.uncompressedSize ? undefined : asIo(name, new Error(`inflates to ${total} bytes, ${entry.uncompressedSize} declared`))));
    });
  }

  /** Digest of one entry's inflated bytes, computed as it streams (see stream). */
  async hash(name: string, algorithm: string, kind: LimitName, maxBytes: number): Promise<Buffer> {
    const digest = createHash(algorithm);
    await this.stream(name, kind, maxBytes, (chunk) => {
      digest.update(chunk);
    });
    return digest.digest();
  }

  close(): void {
    void this.file.close().catch(() => undefined);
  }

  /**
   * The entry's bytes as stored, in READ_STEP blocks read by offset: after its local header (whose name and extra
   * lengths may differ from the central directory's: zipalign pads the local extra field), exactly the declared
   * compressed size, which must lie inside the file. Refused here: encryption, methods other than stored and
   * deflate, a stored entry whose two sizes differ.
   */
  private async *storedBytes(entry: EntryRecord): AsyncGenerator<Buffer> {
    if (entry.generalPurposeBitFlag & 0x1) throw asIo(entry.name, new Error('the entry is encrypted'));
    if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) throw asIo(entry.name, new Error(`unsupported compression method ${entry.compressionMethod}`));
    if (entry.compressionMethod === 0 && entry.compressedSize !== entry.uncompressedSize) {
      throw asIo(entry.name, new Error(`stored with a compressed size of ${entry.compressedSize} and an uncompressed size of ${entry.uncompressedSize}`));
    }
    const head = Buffer.alloc(30);
    const at = entry.relativeOffsetOfLocalHeader;
    if (at + 30 > this.fileSize || (await this.file.read(head, 0, 30, at)).bytesRead < 30 || head.readUInt32LE(0) !== 0x04034b50) {
      throw asIo(entry.name, new Error('invalid local file header'));
    }
    const start = at + 30 + head.readUInt16LE(26) + head.readUInt16LE(28);
    if (start + entry.compressedSize > this.fileSize) throw asIo(entry.name, new Error('the entry\'s data runs past the end of the file'));
    for (let pos = 0; pos < entry.compressedSize; ) {
      const block = Buffer.allocUnsafe(Math.min(READ_STEP, entry.compressedSize - pos));
      const { bytesRead } = await this.file.read(block, 0, block.length, start + pos);
      if (bytesRead === 0) throw asIo(entry.name, new Error('the file ends inside the entry'));
      pos += bytesRead;
      yield bytesRead === block.length ? block : block.subarray(0, bytesRead);
    }
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * An entry's name as Android and apksig know it: the bytes of its central-directory record, nothing else. Android
 * (libziparchive) finds an entry by comparing those bytes with the UTF-8 of the name it looks for, so the name is
 * their UTF-8 reading, whatever the language-encoding flag says. A zip library's own decoding would let a package
 * show the rules a decoy: yauzl's, for one, takes the name from an Info-ZIP Unicode Path extra field (0x7075) when there is one, and turns
 * backslashes into slashes, so `assets/x` with such a field, or `res\xml\config.xml`, could stand for an entry Android
 * reads under another name. Bytes that are not UTF-8 (no name Android looks up) become lone surrogates
 * U+DC80-U+DCFF, one per byte, so two different byte strings never become one name; a leading byte-order mark is
 * part of the name (Android does not skip it).
 */
export function entryName(raw: Buffer): string {
  try {
    return UTF8.decode(raw);
  } catch {
    let out = '';
    for (const b of raw) out += String.fromCharCode(b < 0x80 ? b : 0xdc00 + b);
    return out;
  }
}

function asIo(name: string, err: Error | null | undefined): UnreadablePackageError {
  return new UnreadablePackageError('io', `cannot read entry ${name}: ${err?.message ?? 'unknown error'}`);
}
