import { parseBuffer } from 'bplist-parser';
import { UnreadablePackageError } from '../errors';
import { parseXmlPlist } from './xml-plist';

export type PlistDict = Record<string, unknown>;

const BINARY_MAGIC = 'bplist00';

/** Parses an XML or binary property list whose root must be a dictionary. */
export function parsePlistDict(buf: Buffer, name: string): PlistDict {
  let root: unknown;
  try {
    root = buf.subarray(0, 8).toString('latin1') === BINARY_MAGIC ? parseBuffer(buf)[0] : parseXmlPlist(buf.toString('utf8'));
  } catch (err) {
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
