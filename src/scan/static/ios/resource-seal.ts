import { LimitExceededError, UnreadablePackageError } from '../package/errors';
import { LIMITS } from '../package/limits';
import { isMacho } from '../macho/macho';
import type { PackageZip } from '../package/zip-reader';
import { entryBytes } from './entry-bytes';
import type { MatchBudget } from './posix-regex';
import { isDict, parsePlistDict, type PlistDict } from './read-plist';
import { findRule, readResourceRules, ResourceRulesError, type ResourceRule } from './resource-rules';
import { addProblem, type SealReport } from './seal-report';

/**
 * Compares _CodeSignature/CodeResources (files2 under rules2) with the files of the bundle, as codesign
 * --verify does: each file a rule seals must be listed with its SHA-256 (hash2), its link target (symlink) or, for
 * nested code, its cdhash; each listed file must exist unless optional. codesign's own exclusions are applied
 * first: _CodeSignature/, the main executable (sealed by its code signature) and Info.plist (bound by special
 * slot 1). Nested bundles (a directory a `nested` rule matches whose name has an extension) are sealed as one
 * unit by the cdhash of their executable and are not walked.
 */
/**
 * How nested code is verified (by the caller, which knows how to check a whole bundle): each returns null when the
 * code's cdhash is `cdhash` and its own seal holds (its problems go to the report), else what differs.
 */
export type NestedChecks = {
  bundle(dir: string, cdhash: Buffer): Promise<string | null>;
  code(name: string, cdhash: Buffer): Promise<string | null>;
};

export async function checkResourceSeal(zip: PackageZip, appDir: string, executable: string, codeResources: Buffer, report: SealReport, nested: NestedChecks): Promise<void> {
  const seal = readSeal(codeResources, appDir);
  if (typeof seal === 'string') return addProblem(report, seal);
  const { files2, rules } = seal;
  const budget: MatchBudget = { steps: 0 };
  const files = zip.names().filter((n) => n.startsWith(appDir) && !n.endsWith('/')).map((n) => n.slice(appDir.length));
  const long = files.find((f) => f.length > LIMITS.sealPathLength);
  if (long !== undefined) throw new LimitExceededError('sealPathLength', `the bundle holds a path of ${long.length} characters, over the ${LIMITS.sealPathLength}-character limit`);
  const excluded = (rel: string) => rel === executable || rel === 'Info.plist' || rel === 'CodeResources'
    || rel.startsWith('_CodeSignature/') || rel.startsWith('_MASReceipt/');
  const nestedRoots = findNestedRoots(files.filter((f) => !excluded(f)), rules, budget);
  const underNested = (rel: string) => {
    for (let i = rel.indexOf('/'); i > 0; i = rel.indexOf('/', i + 1)) if (nestedRoots.has(rel.slice(0, i))) return true;
    return false;
  };
  const seen = new Set<string>();
  const sealed = (rel: string) => (Object.prototype.hasOwnProperty.call(files2, rel) ? files2[rel] : undefined);
  const sealedFiles: Array<{ rel: string; entry: unknown; nested: boolean }> = [];
  for (const rel of files) {
    if (excluded(rel) || underNested(rel)) continue;
    const rule = findRule(rules, rel, budget);
    if (!rule || rule.omit) continue;
    seen.add(rel);
    const entry = sealed(rel);
    if (entry === undefined) addProblem(report, `${appDir}${rel}: added after signing (not in the seal)`);
    else sealedFiles.push({ rel, entry, nested: rule.nested });
  }
  // Files are hashed a few at a time (small files cost a zip read each, more than their hash); nested code, whose
  // check reports problems of its own, is checked afterwards one by one, so the problems' order never varies.
  const outcomes = await inPool(sealedFiles.filter((f) => !f.nested), HASHED_AT_ONCE,
    (f) => compareFile(zip, appDir + f.rel, f.entry, false, nested).catch(unreadable));
  const byFile = new Map(sealedFiles.filter((f) => !f.nested).map((f, k) => [f, outcomes[k]]));
  for (const f of sealedFiles) {
    const problem = f.nested ? await compareFile(zip, appDir + f.rel, f.entry, true, nested).catch(unreadable) : byFile.get(f);
    if (problem) addProblem(report, `${appDir}${f.rel}: ${problem}`);
  }
  for (const root of nestedRoots) {
    seen.add(root);
    const entry = sealed(root);
    if (entry === undefined) {
      addProblem(report, `${appDir}${root}: nested bundle added after signing (not in the seal)`);
      continue;
    }
    const problem = isDict(entry) && Buffer.isBuffer(entry.cdhash) ? await nested.bundle(`${appDir}${root}/`, entry.cdhash) : 'nested bundle sealed without a cdhash';
    if (problem) addProblem(report, `${appDir}${root}: ${problem}`);
  }
  for (const [rel, entry] of Object.entries(files2)) {
    if (seen.has(rel) || (isDict(entry) && entry.optional === true)) continue;
    const present = zip.has(appDir + rel);
    addProblem(report, `${appDir}${rel}: ${present ? 'sealed, but the resource rules now leave it out' : 'sealed file is missing'}`);
  }
}

/** Sealed files hashed at once: enough to overlap zip reads, inflation and hashing on two cores. */
const HASHED_AT_ONCE = 4;

/** Runs `task` over `items`, at most `width` at once; results in the items' order. */
async function inPool<T, R>(items: T[], width: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const k = next++;
      out[k] = await task(items[k]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  return out;
}

/** A corrupt entry (bad deflate data, a wrong CRC) cannot match its seal: a problem of that file, not of the scan. */
function unreadable(err: unknown): string {
  if (err instanceof UnreadablePackageError) return `unreadable (${err.message})`;
  throw err;
}

function readSeal(codeResources: Buffer, appDir: string): { files2: PlistDict; rules: ResourceRule[] } | string {
  const name = `${appDir}_CodeSignature/CodeResources`;
  let plist: PlistDict;
  try {
    plist = parsePlistDict(codeResources, name);
  } catch (err) {
    if (err instanceof UnreadablePackageError) return `${name}: not a readable property list`;
    throw err;
  }
  const files2 = plist.files2;
  if (!isDict(files2)) return `${name}: has no files2 (a version 1 seal, which iOS no longer accepts)`;
  if (Object.keys(files2).length > LIMITS.sealedFiles) {
    throw new LimitExceededError('sealedFiles', `CodeResources lists over ${LIMITS.sealedFiles} files`);
  }
  try {
    return { files2, rules: readResourceRules(plist.rules2) };
  } catch (err) {
    if (err instanceof ResourceRulesError) return `${name}: ${err.message}`;
    throw err;
  }
}

/** Directories that are nested bundles, outermost first; what is inside one is not a resource of this bundle. */
function findNestedRoots(files: string[], rules: ResourceRule[], budget: MatchBudget): Set<string> {
  const dirs = new Set<string>();
  for (const f of files) for (let i = f.indexOf('/'); i > 0; i = f.indexOf('/', i + 1)) dirs.add(f.slice(0, i));
  const roots = new Set<string>();
  const sorted = [...dirs].sort((a, b) => a.split('/').length - b.split('/').length);
  for (const dir of sorted) {
    if ([...ancestors(dir)].some((a) => roots.has(a))) continue;
    const base = dir.slice(dir.lastIndexOf('/') + 1);
    if (!base.includes('.')) continue;
    const rule = findRule(rules, dir, budget);
    if (rule?.nested && !rule.omit) roots.add(dir);
  }
  return roots;
}

function* ancestors(dir: string): Generator<string> {
  for (let i = dir.indexOf('/'); i > 0; i = dir.indexOf('/', i + 1)) yield dir.slice(0, i);
}

/** What is wrong with one sealed file, or null when it matches its seal. */
async function compareFile(zip: PackageZip, name: string, entry: unknown, nestedRule: boolean, nested: NestedChecks): Promise<string | null> {
  const record = zip.entry(name);
  if (!record) return 'unreadable entry';
  const isLink = record.versionMadeBy >> 8 === 3 && ((record.externalFileAttributes >>> 16) & 0o170000) === 0o120000;
  const spec = Buffer.isBuffer(entry) ? { hash: entry } : entry;
  if (!isDict(spec)) return 'its seal entry is not a dictionary';
  if (typeof spec.symlink === 'string') {
    if (!isLink) return 'sealed as a symbolic link, but is a file';
    const [target] = await entryBytes(zip, name, 'sealFileBytes', LIMITS.sealFileBytes).ranges([[0, Math.min(record.uncompressedSize, 4096)]]);
    return target.toString('utf8') === spec.symlink ? null : 'symbolic link target differs from its seal';
  }
  if (isLink) return 'a symbolic link, sealed as a file';
  if (Buffer.isBuffer(spec.cdhash) && nestedRule) {
    const [head] = await entryBytes(zip, name, 'sealFileBytes', LIMITS.sealFileBytes).ranges([[0, 4]]);
    return isMacho(head) ? nested.code(name, spec.cdhash) : 'sealed as nested code, but is not a Mach-O file';
  }
  const [algorithm, expected] = Buffer.isBuffer(spec.hash2) ? ['sha256', spec.hash2] : Buffer.isBuffer(spec.hash) ? ['sha1', spec.hash] : [null, null];
  if (!algorithm || !expected) return 'its seal entry has no hash';
  const actual = await zip.hash(name, algorithm, 'sealFileBytes', LIMITS.sealFileBytes);
  return actual.equals(expected) ? null : `contents differ from the seal (${algorithm === 'sha256' ? 'SHA-256' : 'SHA-1'})`;
}
