// Zip containers written byte by byte for the tests of what a reader takes an entry's name and place to be: the
// contents come from real tools (aapt-compiled manifests), the signatures are then made by apksigner.
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { keystore } from '../../fixtures/build-packages';
import { run } from '../../support/host-tools';


export type RawEntry = {
  /** The name's bytes as stored in the local header and the central directory. */
  name: Buffer | string;
  data: Buffer;
  /** Extra field of the central-directory record only. */
  centralExtra?: Buffer;
  flags?: number;
};

const u16 = (v: number) => { const b = Buffer.alloc(2); b.writeUInt16LE(v); return b; };
const u32 = (v: number) => { const b = Buffer.alloc(4); b.writeUInt32LE(v >>> 0); return b; };

/** A zip of stored entries, each record exactly as given. */
export function rawZip(entries: RawEntry[]): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const n = Buffer.isBuffer(e.name) ? e.name : Buffer.from(e.name, 'utf8');
    const extra = e.centralExtra ?? Buffer.alloc(0);
    const crc = crc32(e.data);
    const flags = e.flags ?? 0;
    const local = Buffer.concat([u32(0x04034b50), u16(20), u16(flags), u16(0), u16(0), u16(0x21), u32(crc), u32(e.data.length), u32(e.data.length), u16(n.length), u16(0), n, e.data]);
    central.push(Buffer.concat([u32(0x02014b50), u16(20), u16(20), u16(flags), u16(0), u16(0), u16(0x21), u32(crc), u32(e.data.length), u32(e.data.length), u16(n.length), u16(extra.length), u16(0), u16(0), u16(0), u32(0), u32(offset), n, extra]));
    locals.push(local);
    offset += local.length;
  }
  const cd = Buffer.concat(central);
  const eocd = Buffer.concat([u32(0x06054b50), u16(0), u16(0), u16(entries.length), u16(entries.length), u32(cd.length), u32(offset), u16(0)]);
  return Buffer.concat([...locals, cd, eocd]);
}

/** Info-ZIP's Unicode Path extra field (0x7075): `unicodeName` stands for the record's raw name (matched by CRC-32). */
export function unicodePathExtra(rawName: Buffer | string, unicodeName: string): Buffer {
  const raw = Buffer.isBuffer(rawName) ? rawName : Buffer.from(rawName, 'utf8');
  const data = Buffer.concat([Buffer.from([1]), u32(crc32(raw)), Buffer.from(unicodeName, 'utf8')]);
  return Buffer.concat([u16(0x7075), u16(data.length), data]);
}

/** Writes the zip, zipaligns it and signs it with apksigner (v2+v3, the release key); returns the APK's path. */
export async function signedApk(zip: Buffer): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'shieldgate-zip-tricks-'));
  await writeFile(path.join(dir, 'unsigned.apk'), zip);
  await run('zipalign', ['-f', '4', path.join(dir, 'unsigned.apk'), path.join(dir, 'aligned.apk')]);
  const out = path.join(dir, 'app.apk');
  await run('apksigner', ['sign', '--ks', await keystore('release'), '--ks-pass', 'pass:android', '--key-pass', 'pass:android',
    '--v1-signing-enabled', 'false', '--v2-signing-enabled', 'true', '--v3-signing-enabled', 'true', '--out', out, path.join(dir, 'aligned.apk')]);
  return out;
}

/** What Android's package parser reads as the manifest: aapt opens the entry by its stored name, as libziparchive does. */
export async function aaptDebuggable(apk: string): Promise<boolean> {
  const { stdout } = await run('aapt', ['dump', 'badging', apk], { maxBuffer: 1 << 22 });
  return /^application-debuggable$/m.test(stdout);
}

/** Every entry of a zip, in central-directory order, inflated (as `unzip` lists and extracts them). */
export async function entriesOf(zip: string): Promise<RawEntry[]> {
  const { stdout } = await run('unzip', ['-Z1', zip], { maxBuffer: 1 << 22 });
  const out: RawEntry[] = [];
  for (const name of stdout.split('\n').filter((n) => n && !n.endsWith('/'))) {
    const { stdout: data } = await run('unzip', ['-p', zip, name], { encoding: 'buffer', maxBuffer: 1 << 26 });
    out.push({ name, data: data as unknown as Buffer });
  }
  return out;
}

/** The compiled XML of one entry as aapt prints it (aapt opens it by its stored name, as Android does). */
export async function aaptXmlTree(apk: string, entry: string): Promise<string> {
  const { stdout } = await run('aapt', ['dump', 'xmltree', apk, entry], { maxBuffer: 1 << 22 });
  return stdout;
}

/**
 * The zip with `tail` appended to the extra field of its last central-directory record (the central directory and the
 * end record's size follow): bytes a JAR signature does not cover, which end right where the end record starts.
 */
export function withCentralTail(zip: Buffer, tail: Buffer): Buffer {
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const cdSize = zip.readUInt32LE(eocd + 12);
  const cdOffset = zip.readUInt32LE(eocd + 16);
  let last = cdOffset;
  for (let p = cdOffset; p < cdOffset + cdSize; p += 46 + zip.readUInt16LE(p + 28) + zip.readUInt16LE(p + 30) + zip.readUInt16LE(p + 32)) last = p;
  const lastEnd = cdOffset + cdSize;
  const record = Buffer.from(zip.subarray(last, lastEnd));
  if (record.readUInt16LE(32) !== 0) throw new Error('the last record has a comment');
  const field = Buffer.concat([u16(0xcafe), u16(tail.length), tail]);
  record.writeUInt16LE(record.readUInt16LE(30) + field.length, 30);
  const end = Buffer.from(zip.subarray(eocd));
  end.writeUInt32LE(cdSize + field.length, 12);
  return Buffer.concat([zip.subarray(0, last), record, field, end]);
}

/** A Zip64 end-of-central-directory locator naming a Zip64 end record at `offset`. */
export function zip64Locator(offset: number): Buffer {
  const b = Buffer.alloc(20);
  b.writeUInt32LE(0x07064b50, 0);
  b.writeBigUInt64LE(BigInt(offset), 8);
  b.writeUInt32LE(1, 16);
  return b;
}

/**
 * What to put at the end of a zip's central directory (see withCentralTail, whose extra field starts `at`) so that
 * a reader following a Zip64 locator finds another central directory listing one stored entry, `name` = `data`,
 * also inside the tail; readers that ignore the locator (Android, when no end-record field is saturated) never see it.
 */
export function hiddenDirectoryTail(at: number, name: string, data: Buffer): Buffer {
  const start = at + 4; // after the extra field's id and length
  const n = Buffer.from(name);
  const crc = crc32(data);
  const local = Buffer.concat([u32(0x04034b50), u16(20), u16(0), u16(0), u16(0), u16(0x21), u32(crc), u32(data.length), u32(data.length), u16(n.length), u16(0), n, data]);
  const cdAt = start + local.length;
  const central = Buffer.concat([u32(0x02014b50), u16(20), u16(20), u16(0), u16(0), u16(0), u16(0x21), u32(crc), u32(data.length), u32(data.length), u16(n.length), u16(0), u16(0), u16(0), u16(0), u32(0), u32(start), n]);
  const record = Buffer.alloc(56);
  record.writeUInt32LE(0x06064b50, 0);
  record.writeBigUInt64LE(44n, 4);
  record.writeUInt16LE(45, 12);
  record.writeUInt16LE(45, 14);
  record.writeBigUInt64LE(1n, 24);
  record.writeBigUInt64LE(1n, 32);
  record.writeBigUInt64LE(BigInt(central.length), 40);
  record.writeBigUInt64LE(BigInt(cdAt), 48);
  return Buffer.concat([local, central, record, zip64Locator(cdAt + central.length)]);
}

/** Where withCentralTail's extra field will start in `zip`. */
export function centralTailOffset(zip: Buffer): number {
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  return eocd;
}
