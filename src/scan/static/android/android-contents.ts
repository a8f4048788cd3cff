import type { Finding } from '../../model/types';
import { StringPool } from './string-pool';
import { DexStrings, descriptorPackage } from '../dex/dex-strings';
import { LimitExceededError, UnreadablePackageError } from '../package/errors';
import { LIMITS } from '../package/limits';
import type { PackageZip } from '../package/zip-reader';
import { SecretCollector } from '../secrets/collector';
import { TextBudget, scanTextEntry } from '../secrets/text-entries';

const APK_DEX = /^classes(\d*)\.dex$/;
const AAB_DEX = /^base\/dex\/classes(\d*)\.dex$/;
const APK_TEXT = /^(assets|res\/raw)\/./;
const AAB_TEXT = /^base\/(assets|res\/raw)\/./;
const RES_STRING_POOL_TYPE = 0x0001;
/** The shortest value any rule matches (an AWS access key id): shorter DEX strings are not even decoded. */
const SHORTEST_SECRET = 20;

/** Entries the secret scan of an Android package reads (for the PackageZip's keep function). */
export function isAndroidSecretEntry(name: string): boolean {
  return APK_DEX.test(name) || AAB_DEX.test(name) || APK_TEXT.test(name) || AAB_TEXT.test(name) ||
    name === 'resources.arsc' || name === 'base/resources.pb';
}

/**
 * Searches an APK or App Bundle for secrets (DEX string tables, resource strings, assets and raw resources) and
 * lists the Java packages its DEX type descriptors name (sorted, at most LIMITS.dexTypePackages), from which SDKs
 * are recognised. A malformed DEX file or resource table is skipped (ART and aapt refuse them too); a cap reached
 * throws LimitExceededError.
 */
export async function scanAndroidContents(zip: PackageZip, options: { bundle: boolean }): Promise<{ findings: Finding[]; dexTypePackages: string[] }> {
  const collector = new SecretCollector();
  const packages = new Set<string>();
  // One buffer for every DEX file, grown to the largest: a file is done with before the next is read, and 80 MB of
  // DEX read into fresh buffers would grow the process by as much before the collector frees them.
  const scratch = { buffer: Buffer.alloc(0) };
  for (const name of dexEntries(zip, options.bundle)) {
    const bytes = await readDex(zip, name, scratch);
    await skipIfCorrupt(() => scanDex(bytes, name, collector, packages));
  }
  await scanResourceStrings(zip, options.bundle, collector);
  const budget = new TextBudget();
  const text = options.bundle ? AAB_TEXT : APK_TEXT;
  for (const name of zip.names()) if (text.test(name)) await scanTextEntry(zip, name, collector, budget);
  return { findings: collector.findings(), dexTypePackages: [...packages].sort() };
}

/** classes.dex, classes2.dex, ... in the order the platform loads them. */
function dexEntries(zip: PackageZip, bundle: boolean): string[] {
  const pattern = bundle ? AAB_DEX : APK_DEX;
  // A DEX entry ART cannot read (see PackageZip.readable) is not one of the app's.
  const found = zip.names().flatMap((n) => {
    const m = pattern.exec(n);
    return m && zip.readable(n) ? [{ n, i: m[1] === '' ? 1 : Number(m[1]) }] : [];
  });
  if (found.length > LIMITS.dexFiles) throw new LimitExceededError('dexFiles', `${found.length} DEX files, over the ${LIMITS.dexFiles} limit`);
  return found.sort((a, b) => a.i - b.i).map((f) => f.n);
}

/** One DEX file whole (string_ids point anywhere in it), in the scratch buffer (valid until the next read). */
async function readDex(zip: PackageZip, name: string, scratch: { buffer: Buffer }): Promise<Buffer> {
  const size = zip.entry(name)?.uncompressedSize ?? 0;
  if (size > LIMITS.dexFileBytes) throw new LimitExceededError('dexFileBytes', `${name} declares ${size} bytes, over the ${LIMITS.dexFileBytes}-byte limit`);
  if (scratch.buffer.length < size) scratch.buffer = Buffer.allocUnsafe(size);
  let filled = 0;
  await zip.stream(name, 'dexFileBytes', size, (chunk, offset) => {
    chunk.copy(scratch.buffer, offset);
    filled = offset + chunk.length;
  });
  return scratch.buffer.subarray(0, filled);
}

function scanDex(bytes: Buffer, name: string, collector: SecretCollector, packages: Set<string>): void {
  const dex = new DexStrings(bytes);
  for (const s of dex.strings(SHORTEST_SECRET)) collector.scan(name, s);
  for (const descriptor of dex.typeDescriptors()) {
    if (packages.size >= LIMITS.dexTypePackages) break;
    const pkg = descriptorPackage(descriptor);
    if (pkg) packages.add(pkg);
  }
}

/**
 * Resource strings: the global string pool of resources.arsc (every string value of every configuration), or the
 * App Bundle's resources.pb searched as text (protobuf keeps strings as UTF-8 bytes). Google API keys there are the
 * app's Firebase and Maps configuration (see rule-text.ts), not reported.
 */
async function scanResourceStrings(zip: PackageZip, bundle: boolean, collector: SecretCollector): Promise<void> {
  const name = bundle ? 'base/resources.pb' : 'resources.arsc';
  if (!zip.has(name)) return;
  const bytes = await zip.read(name, 'resourceTable');
  if (bundle) {
    collector.scan(name, bytes.toString('latin1'), { clientConfig: true, awsSecretsAnywhere: true });
    return;
  }
  await skipIfCorrupt(() => {
    const pool = globalStringPool(bytes);
    for (let i = 0; pool && i < pool.size; i++) collector.scan(name, pool.get(i) ?? '', { clientConfig: true });
  });
}

/** The first chunk inside the table header is its global value string pool (ResourceTypes.h, ResTable_header). */
function globalStringPool(buf: Buffer): StringPool | null {
  if (buf.length < 12) return null;
  const end = Math.min(buf.readUInt32LE(4), buf.length);
  const at = buf.readUInt16LE(2);
  if (at + 8 > end || buf.readUInt16LE(at) !== RES_STRING_POOL_TYPE) return null;
  const size = buf.readUInt32LE(at + 4);
  return size >= 8 && at + size <= end ? new StringPool(buf, at, at + size) : null;
}

async function skipIfCorrupt(work: () => void | Promise<void>): Promise<void> {
  try {
    await work();
  } catch (err) {
    if (!(err instanceof UnreadablePackageError)) throw err;
  }
}
