// Zip containers written byte by byte for the tests of what a reader takes an entry's name and place to be: the
// contents come from real tools (aapt-compiled manifests), the signatures are then made by apksigner.
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { crc32 } from 'node:zlib';
import { keystore } from '../../fixtures/build-packages';

const run = promisify(execFile);

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
