import yauzl from 'yauzl';
import { LimitExceededError, UnreadablePackageError } from './errors';
import { LIMITS, type LimitName } from './limits';

/** The entry-size caps of limits.ts, one per kind of entry read. */
export type EntryKind = Extract<LimitName, 'manifest' | 'resourceTable' | 'resourceXml' | 'signatureFile' | 'plist' | 'provisioningProfile'>;

/**
 * Random access to the few entries of a package the analyser needs.
 * Only the central directory is walked; entry data is streamed only for entries that are read,
 * so memory does not grow with the size of the package.
 */
export class PackageZip {
  private constructor(
    private readonly zip: yauzl.ZipFile,
    private readonly kept: Map<string, yauzl.Entry>,
    /** Number of entries in the central directory, kept or not. */
    readonly entryCount: number,
  ) {}

  /** Opens a zip and remembers the entries whose name `keep` accepts; rejects with UnreadablePackageError. */
  static async open(filePath: string, keep: (name: string) => boolean): Promise<PackageZip> {
    const zip = await new Promise<yauzl.ZipFile>((resolve, reject) => {
      yauzl.open(
        filePath,
        // lazyEntries: walk the central directory at our pace; autoClose false: the fd stays open for reads.
        { lazyEntries: true, autoClose: false, decodeStrings: true, validateEntrySizes: true, strictFileNames: false },
        (err, z) => (err || !z ? reject(new UnreadablePackageError('not-zip', `not a zip archive: ${err?.message ?? 'no archive'}`)) : resolve(z)),
      );
    });
    try {
      // The declared count is checked before walking; the walk counts too, in case the declaration lies.
      if (zip.entryCount > LIMITS.zipEntries) throw tooManyEntries(zip.entryCount);
      const { kept, count } = await collectEntries(zip, keep);
      return new PackageZip(zip, kept, count);
    } catch (err) {
      zip.close();
      throw err;
    }
  }

  has(name: string): boolean {
    return this.kept.has(name);
  }

  /** Names of the kept entries, in central-directory order. */
  names(): string[] {
    return [...this.kept.keys()];
  }

  /**
   * Reads one entry whole, refusing anything larger than maxBytes before inflating it.
   * yauzl also checks the inflated length against the declared size, so a zip bomb that lies about
   * its size fails too; the running count below is a second guard.
   */
  async read(name: string, kind: EntryKind): Promise<Buffer> {
    const maxBytes = LIMITS[kind];
    const entry = this.kept.get(name);
    if (!entry) throw new UnreadablePackageError('missing-manifest', `entry ${name} not found`);
    if (entry.uncompressedSize > maxBytes) {
      throw new LimitExceededError(kind, `entry ${name} declares ${entry.uncompressedSize} bytes, over the ${maxBytes}-byte limit`);
    }
    const stream = await new Promise<NodeJS.ReadableStream>((resolve, reject) => {
      this.zip.openReadStream(entry, (err, s) => (err || !s ? reject(asIo(name, err)) : resolve(s)));
    });
    return new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let total = 0;
      stream.on('data', (chunk: Buffer) => {
        total += chunk.length;
        if (total > maxBytes) {
          (stream as NodeJS.ReadableStream & { destroy(): void }).destroy();
          reject(new LimitExceededError(kind, `entry ${name} inflates past the ${maxBytes}-byte limit`));
          return;
        }
        chunks.push(chunk);
      });
      stream.on('error', (err: Error) => reject(asIo(name, err)));
      stream.on('end', () => resolve(Buffer.concat(chunks, total)));
    });
  }

  close(): void {
    this.zip.close();
  }
}

function collectEntries(zip: yauzl.ZipFile, keep: (name: string) => boolean): Promise<{ kept: Map<string, yauzl.Entry>; count: number }> {
  return new Promise((resolve, reject) => {
    const kept = new Map<string, yauzl.Entry>();
    let count = 0;
    zip.on('entry', (entry: yauzl.Entry) => {
      if (++count > LIMITS.zipEntries) {
        reject(tooManyEntries(count));
        return;
      }
      // First entry of a name wins, as with Android's package parser.
      if (keep(entry.fileName) && !kept.has(entry.fileName)) kept.set(entry.fileName, entry);
      zip.readEntry();
    });
    zip.on('end', () => resolve({ kept, count }));
    zip.on('error', (err: Error) => reject(new UnreadablePackageError('not-zip', `corrupt zip central directory: ${err.message}`)));
    zip.readEntry();
  });
}

function tooManyEntries(count: number): LimitExceededError {
  return new LimitExceededError('zipEntries', `the archive holds ${count} or more entries, over the ${LIMITS.zipEntries}-entry limit`);
}

function asIo(name: string, err: Error | null | undefined): UnreadablePackageError {
  return new UnreadablePackageError('io', `cannot read entry ${name}: ${err?.message ?? 'unknown error'}`);
}
