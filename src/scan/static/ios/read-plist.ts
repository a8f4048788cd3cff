import { LimitExceededError, UnreadablePackageError } from '../package/errors';
import { isBinaryPlist, parseBinaryPlist } from './binary-plist';
import { parseXmlPlist } from './xml-plist';

export type PlistDict = Record<string, unknown>;

/** Parses an XML or binary property list whose root must be a dictionary. */
export function parsePlistDict(buf: Buffer, name: string): PlistDict {
  let root: unknown;
  try {
    root = isBinaryPlist(buf) ? parseBinaryPlist(buf) : parseXmlPlist(buf.toString('utf8'));
  } catch (err) {
    if (err instanceof LimitExceededError) throw err;
    throw new UnreadablePackageError('corrupt-manifest', `${name} is not a valid property list: ${(err as Error).message}`);
  }
  if (!isDict(root)) throw new UnreadablePackageError('corrupt-manifest', `${name} does not contain a dictionary`);
  return root;
}

export function isDict(v: unknown): v is PlistDict {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date) && !Buffer.isBuffer(v);
}

export function dictAt(d: PlistDict, key: string): PlistDict | undefined {
  const v = d[key];
  return isDict(v) ? v : undefined;
}

export function stringAt(d: PlistDict, key: string): string | undefined {
  const v = d[key];
  return typeof v === 'string' ? v : undefined;
}

/** Booleans as plists carry them; `<string>YES</string>` is read as true because iOS accepts it too. */
export function boolAt(d: PlistDict, key: string): boolean | undefined {
  const v = d[key];
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') return /^(yes|true|1)$/i.test(v) ? true : /^(no|false|0)$/i.test(v) ? false : undefined;
  if (typeof v === 'number') return v !== 0;
  return undefined;
}
