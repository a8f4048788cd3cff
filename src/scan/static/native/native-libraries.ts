import { open } from 'node:fs/promises';
import type { Finding, NativeLibrary } from '../../model/types';
import { LimitExceededError } from '../package/errors';
import { LIMITS } from '../package/limits';
import type { PackageZip } from '../package/zip-reader';
import { MalformedElfError, readElf, type ElfFacts } from './elf';
import { libraryBytes } from './library-bytes';
import { nativeFindings, type AnalyzedLibrary } from './native-rules';

export type NativeOptions = {
  targetSdk: number;
  /** The scan's date: the 16 KB rule's severity follows the store requirement in force on it. */
  now: Date;
  /** 'base/' for App Bundles (base/lib/<abi>/), '' (the default) for APKs. */
  prefix?: string;
};

/**
 * The ABI of a native library entry (`<prefix>lib/<abi>/<name>.so`), null for any other entry. Only files directly
 * in lib/<abi>/ count: the package manager extracts (or maps) those and nothing deeper.
 */
export function nativeLibraryAbi(name: string, prefix = ''): string | null {
  if (!name.startsWith(prefix)) return null;
  const m = /^lib\/([^/]+)\/[^/]+\.so$/.exec(name.slice(prefix.length));
  return m ? m[1] : null;
}

/**
 * Every native library of the package, read once each (SHA-256 and the ELF facts), and the findings of the
 * hardening rules (native-rules.ts) over them. The zip must keep the entries nativeLibraryAbi accepts.
 *
 * A library that is not an ELF file, or one no loader would accept (MalformedElfError: offsets outside the file,
 * segments that do not hold what the dynamic section names), is listed in `libraries` with its digest and left out
 * of the rules: Android's linker refuses to load it, so it carries none of the risks they describe. Rejects only
 * with LimitExceededError (a cap of limits.ts) or the package reader's UnreadablePackageError.
 */
export async function analyzeNativeLibraries(zip: PackageZip, filePath: string, options: NativeOptions): Promise<{ findings: Finding[]; libraries: NativeLibrary[] }> {
  const prefix = options.prefix ?? '';
  // A library the linker cannot read from the package (see PackageZip.readable) is none of the app's code.
  const names = zip.names().filter((n) => nativeLibraryAbi(n, prefix) !== null && zip.readable(n));
  if (names.length === 0) return { findings: [], libraries: [] };
  if (names.length > LIMITS.nativeLibraries) {
    throw new LimitExceededError('nativeLibraries', `the package holds ${names.length} native libraries, over the ${LIMITS.nativeLibraries} limit`);
  }
  let declared = 0;
  for (const n of names) declared += zip.entry(n)?.uncompressedSize ?? 0;
  if (declared > LIMITS.nativeLibraryTotalBytes) {
    throw new LimitExceededError('nativeLibraryTotalBytes', `the native libraries declare ${declared} bytes, over the ${LIMITS.nativeLibraryTotalBytes}-byte limit`);
  }
  const fh = await open(filePath, 'r');
  try {
    const fileSize = (await fh.stat()).size;
    const analyzed: AnalyzedLibrary[] = [];
    const libraries: NativeLibrary[] = [];
    for (const name of names) {
      const record = zip.entry(name);
      if (!record) continue;
      const abi = nativeLibraryAbi(name, prefix) as string;
      if (record.uncompressedSize > LIMITS.nativeLibraryBytes) {
        throw new LimitExceededError('nativeLibraryBytes', `${name} declares ${record.uncompressedSize} bytes, over the ${LIMITS.nativeLibraryBytes}-byte limit`);
      }
      const bytes = await libraryBytes(zip, fh, fileSize, record).catch(malformedAs(null));
      if (!bytes) continue; // the package ends inside a stored library: nothing to list
      const facts = await readElf(bytes.source).catch(malformedAs<ElfFacts | null>(null));
      libraries.push({ path: name, abi, sha256: bytes.sha256 });
      analyzed.push({ path: name, abi, storedOffset: bytes.dataOffset, facts });
    }
    return { findings: nativeFindings(analyzed, options), libraries };
  } finally {
    await fh.close();
  }
}

/** Turns MalformedElfError into `value`; every other error goes on. */
function malformedAs<T>(value: T): (err: unknown) => T {
  return (err) => {
    if (err instanceof MalformedElfError) return value;
    throw err;
  };
}
