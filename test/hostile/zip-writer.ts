// A minimal zip writer for hostile packages: the real `zip` tool cannot write what an attacker writes (entries
// sharing one local header, sizes that lie, more entries than a classic directory holds), so this one can.
import { crc32, deflateRawSync } from 'node:zlib';

export type ZipEntry = {
  name: string;
  data: Buffer;
  /** Stored (0, default) or deflated (8). */
  method?: 0 | 8;
  /** Uncompressed size written in the headers instead of the real one (a lie). */
  declaredSize?: number;
  /** Point the central-directory record at the local header of this earlier entry (overlapping entries). */
  sameDataAs?: number;
};

const LOCAL = 0x04034b50;
const CENTRAL = 0x02014b50;
const EOCD = 0x06054b50;
const ZIP64_EOCD = 0x06064b50;
const ZIP64_LOCATOR = 0x07064b50;

/** Serialises entries as a zip; writes Zip64 end records when there are more than 65,535 entries. */
export function writeZip(entries: ZipEntry[]): Buffer {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  const offsets: number[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name, 'utf8');
    const method = e.method ?? 0;
    const body = method === 8 ? deflateRawSync(e.data) : e.data;
    const crc = crc32(e.data);
    const size = e.declaredSize ?? e.data.length;
    let at = offset;
    if (e.sameDataAs !== undefined) {
      at = offsets[e.sameDataAs];
    } else {
      const local = Buffer.alloc(30);
      local.writeUInt32LE(LOCAL, 0);
      local.writeUInt16LE(20, 4);
      local.writeUInt16LE(method, 8);
      local.writeUInt32LE(crc, 14);
      local.writeUInt32LE(body.length, 18);
      local.writeUInt32LE(Math.min(size, 0xffffffff), 22);
      local.writeUInt16LE(name.length, 26);
      parts.push(local, name, body);
      offset += local.length + name.length + body.length;
    }
    offsets.push(at);
    const source = e.sameDataAs !== undefined ? entries[e.sameDataAs] : e;
    const sourceBody = e.sameDataAs !== undefined ? (source.method === 8 ? deflateRawSync(source.data) : source.data) : body;
    const record = Buffer.alloc(46);
    record.writeUInt32LE(CENTRAL, 0);
    record.writeUInt16LE(20, 4);
    record.writeUInt16LE(20, 6);
    record.writeUInt16LE(source.method ?? 0, 10);
    record.writeUInt32LE(crc32(source.data), 16);
    record.writeUInt32LE(sourceBody.length, 20);
    record.writeUInt32LE(Math.min(e.declaredSize ?? source.data.length, 0xffffffff), 24);
    record.writeUInt16LE(name.length, 28);
    record.writeUInt32LE(at, 42);
    central.push(record, name);
  }
  const cdOffset = offset;
  const cd = Buffer.concat(central);
  const count = entries.length;
  const tail: Buffer[] = [];
  if (count > 0xffff) {
    const z = Buffer.alloc(56);
    z.writeUInt32LE(ZIP64_EOCD, 0);
    z.writeBigUInt64LE(44n, 4);
    z.writeUInt16LE(45, 12);
    z.writeUInt16LE(45, 14);
    z.writeBigUInt64LE(BigInt(count), 24);
    z.writeBigUInt64LE(BigInt(count), 32);
    z.writeBigUInt64LE(BigInt(cd.length), 40);
    z.writeBigUInt64LE(BigInt(cdOffset), 48);
    const locator = Buffer.alloc(20);
    locator.writeUInt32LE(ZIP64_LOCATOR, 0);
    locator.writeBigUInt64LE(BigInt(cdOffset + cd.length), 8);
    locator.writeUInt32LE(1, 16);
    tail.push(z, locator);
  }
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(EOCD, 0);
  eocd.writeUInt16LE(Math.min(count, 0xffff), 8);
  eocd.writeUInt16LE(Math.min(count, 0xffff), 10);
  eocd.writeUInt32LE(count > 0xffff ? 0xffffffff : cd.length, 12);
  eocd.writeUInt32LE(count > 0xffff ? 0xffffffff : cdOffset, 16);
  tail.push(eocd);
  return Buffer.concat([...parts, cd, ...tail]);
}
