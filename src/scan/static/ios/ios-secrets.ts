import type { Finding } from '../../model/types';
import { isBinaryPlist, parseBinaryPlist } from './binary-plist';
import { PlistSyntaxError, parseXmlPlist, type PlistValue } from './xml-plist';
import { LimitExceededError, UnreadablePackageError } from '../package/errors';
import { LIMITS } from '../package/limits';
import type { PackageZip } from '../package/zip-reader';
import { SecretCollector, type ScanOptions } from '../secrets/collector';
import { TextBudget, scanTextEntry } from '../secrets/text-entries';

const PLIST = /\.plist$/i;
const STRINGS = /\.strings$/i;
const JSON_FILE = /\.json$/i;
/** Firebase's configuration file: its API_KEY is made to ship (see rule-text.ts). */
const FIREBASE_CONFIG = /(^|\/)GoogleService-Info\.plist$/;

/** Entries the secret scan of an iOS package reads (for the PackageZip's keep function). */
export function isIosSecretEntry(name: string): boolean {
  return /^Payload\/[^/]+\.app\/./.test(name) && (PLIST.test(name) || STRINGS.test(name) || JSON_FILE.test(name));
}

/**
 * Searches the app bundle `appDir` (`Payload/<App>.app/`, nested frameworks and extensions included) for secrets:
 * property lists (binary or XML; every string, key and data value), .strings files (binary plists as Xcode
 * compiles them, or UTF-16/UTF-8 text) and JSON files. A property list that does not parse is searched as text.
 */
export async function scanIosSecrets(zip: PackageZip, appDir: string): Promise<Finding[]> {
  const collector = new SecretCollector();
  const budget = new TextBudget();
  for (const name of zip.names()) {
    if (!name.startsWith(appDir) || name.length === appDir.length) continue;
    if (JSON_FILE.test(name)) await scanTextEntry(zip, name, collector, budget);
    else if (PLIST.test(name) || STRINGS.test(name)) await scanPlistEntry(zip, name, collector, budget);
  }
  return collector.findings();
}

async function scanPlistEntry(zip: PackageZip, name: string, collector: SecretCollector, budget: TextBudget): Promise<void> {
  budget.file(name);
  const bytes = await zip.read(name, 'plist');
  budget.read(name, bytes.length);
  const options: ScanOptions = { clientConfig: FIREBASE_CONFIG.test(name), awsSecretsAnywhere: true };
  const root = parsed(bytes);
  if (root === undefined) {
    collector.scan(name, asText(bytes), options);
    return;
  }
  // A binary plist may reference one string from many places: each distinct text is searched once, and every text
  // searched counts against the package's text budget, so a string referenced 100,000 times costs one search.
  const searched = new Set<string>();
  walk(root, (s) => {
    if (searched.has(s)) return;
    searched.add(s);
    budget.read(name, s.length);
    collector.scan(name, s, options);
  });
}

/** The plist's values, or undefined when it is not a plist (a text .strings file, or a damaged plist). */
function parsed(bytes: Buffer): PlistValue | undefined {
  try {
    if (isBinaryPlist(bytes)) return parseBinaryPlist(bytes);
    const text = asText(bytes);
    return /^\s*(<\?xml|<!DOCTYPE|<plist)/.test(text) ? parseXmlPlist(text) : undefined;
  } catch (err) {
    // A cap reached stops the scan; a plist that does not parse is still searched, as text.
    if (err instanceof LimitExceededError) throw err;
    if (err instanceof UnreadablePackageError || err instanceof PlistSyntaxError) return undefined;
    throw err;
  }
}

/** UTF-16 when it starts with a byte-order mark (as .strings files often are), else UTF-8. */
function asText(bytes: Buffer): string {
  if (bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe) return bytes.toString('utf16le', 2);
  if (bytes.length >= 2 && bytes[0] === 0xfe && bytes[1] === 0xff) {
    const swapped = Buffer.from(bytes.subarray(2, bytes.length - (bytes.length % 2)));
    return swapped.swap16().toString('utf16le');
  }
  return bytes.toString('utf8');
}

/**
 * Visits every string of a plist (dictionary keys too, and data as Latin-1), depth-first, iteratively. A binary
 * plist's shared object (one array, dictionary or data referenced from many places) is the same object each time:
 * it is visited once.
 */
function walk(root: PlistValue, visit: (s: string) => void): void {
  const stack: PlistValue[] = [root];
  const seen = new Set<object>();
  let values = 0;
  for (let v = stack.pop(); v !== undefined; v = stack.pop()) {
    if (typeof v === 'object' && v !== null) {
      if (seen.has(v)) continue;
      seen.add(v);
    }
    if (++values > LIMITS.plistValues) throw new LimitExceededError('plistValues', `a property list holds over ${LIMITS.plistValues} values`);
    if (typeof v === 'string') visit(v);
    else if (Buffer.isBuffer(v)) visit(v.toString('latin1'));
    else if (Array.isArray(v)) stack.push(...v);
    else if (v && typeof v === 'object' && !(v instanceof Date)) {
      for (const [k, child] of Object.entries(v)) {
        visit(k);
        stack.push(child);
      }
    }
  }
}
