import type { NativeLibrary } from '../../model/types';
import { UnreadablePackageError } from '../package/errors';
import { LIMITS } from '../package/limits';
import type { PackageZip } from '../package/zip-reader';
import { readMachoFacts, type SliceFacts } from '../macho/hardening';
import { MachoError } from '../macho/macho';
import { digestingEntryBytes } from './entry-bytes';
import { parsePlistDict, stringAt } from './read-plist';

/** One Mach-O file of the app bundle: its zip path, its slices' facts and the SHA-256 of the whole file. */
export type BundleBinary = { path: string; role: 'main' | 'framework' | 'dylib' | 'extension'; slices: SliceFacts[]; sha256: string };

const FRAMEWORK = /^Frameworks\/([^/]+)\.framework\/$/;
const EXTENSION = /^PlugIns\/([^/]+)\.appex\/$/;

/**
 * The Mach-O files of an app bundle: the main executable, each Frameworks/<Name>.framework's executable, every
 * *.dylib, and each PlugIns/<Name>.appex's executable. A bundle's executable is the one its Info.plist names
 * (CFBundleExecutable), else the bundle's base name as Xcode names it. Files that are not Mach-O, symbolic links and
 * missing files are left out; each file is read by readMachoFacts and digested during its last pass.
 */
export async function readBundleBinaries(zip: PackageZip, appDir: string, executable: string, watched: ReadonlySet<string>): Promise<BundleBinary[]> {
  const candidates: Array<{ path: string; role: BundleBinary['role'] }> = [{ path: appDir + executable, role: 'main' }];
  const rels = zip.names().filter((n) => n.startsWith(appDir)).map((n) => n.slice(appDir.length));
  for (const dir of bundleDirs(rels)) {
    const role = FRAMEWORK.test(dir) ? 'framework' : 'extension';
    const base = (FRAMEWORK.exec(dir) ?? EXTENSION.exec(dir) as RegExpExecArray)[1];
    candidates.push({ path: appDir + dir + (await bundleExecutable(zip, appDir + dir) ?? base), role });
  }
  for (const rel of rels) if (rel.endsWith('.dylib')) candidates.push({ path: appDir + rel, role: 'dylib' });
  const seen = new Set<string>();
  const out: BundleBinary[] = [];
  for (const c of candidates) {
    if (seen.has(c.path) || !isRegularFile(zip, c.path)) continue;
    seen.add(c.path);
    const src = digestingEntryBytes(zip, c.path, 'sealFileBytes', LIMITS.sealFileBytes);
    try {
      const slices = await readMachoFacts(src, watched);
      out.push({ ...c, slices, sha256: await src.sha256() });
    } catch (err) {
      // Not a Mach-O, or one too malformed to read: the seal check reports a broken file; nothing to inventory.
      if (err instanceof MachoError || err instanceof UnreadablePackageError) continue;
      throw err;
    }
  }
  return out;
}

/** Inventory entries: one per file and architecture. */
export function nativeLibraries(binaries: BundleBinary[]): NativeLibrary[] {
  return binaries.flatMap((b) => b.slices.map((s) => ({ path: b.path, abi: s.arch, sha256: b.sha256 })));
}

/** The names of the app's embedded frameworks (Frameworks/<Name>.framework), sorted. */
export function frameworkNames(zip: PackageZip, appDir: string): string[] {
  const rels = zip.names().filter((n) => n.startsWith(appDir)).map((n) => n.slice(appDir.length));
  return bundleDirs(rels).map((d) => FRAMEWORK.exec(d)?.[1]).filter((n): n is string => n !== undefined).sort();
}

/** Framework and app extension folders at the top of Frameworks/ and PlugIns/, each once, in name order. */
function bundleDirs(rels: string[]): string[] {
  const dirs = new Set<string>();
  for (const rel of rels) {
    const m = /^(Frameworks\/[^/]+\.framework\/|PlugIns\/[^/]+\.appex\/)/.exec(rel);
    if (m) dirs.add(m[1]);
  }
  return [...dirs].sort();
}

async function bundleExecutable(zip: PackageZip, dir: string): Promise<string | null> {
  const name = `${dir}Info.plist`;
  if (!zip.has(name)) return null;
  try {
    const exe = stringAt(parsePlistDict(await zip.read(name, 'plist'), name), 'CFBundleExecutable');
    return exe && !exe.includes('/') ? exe : null;
  } catch (err) {
    if (err instanceof UnreadablePackageError) return null;
    throw err;
  }
}

/** A stored file, not a directory or a symbolic link (whose bytes are a path, not code). */
function isRegularFile(zip: PackageZip, name: string): boolean {
  const record = zip.entry(name);
  if (!record) return false;
  const isLink = record.versionMadeBy >> 8 === 3 && ((record.externalFileAttributes >>> 16) & 0o170000) === 0o120000;
  return !isLink && !name.endsWith('/');
}
