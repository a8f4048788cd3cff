// Small hostile inputs built byte by byte, for the tests of the analyser's caps. Each builder follows the format's
// own layout (ResourceTypes.h for compiled XML, CFBinaryPList.c for binary plists, APPNOTE.TXT for zip) so that the
// input reaches the cap under test instead of failing an earlier sanity check.
import { crc32 } from 'node:zlib';

const u16 = (n: number) => { const b = Buffer.alloc(2); b.writeUInt16LE(n); return b; };
const u32 = (n: number) => { const b = Buffer.alloc(4); b.writeUInt32LE(n >>> 0); return b; };

/** A ResStringPool chunk (UTF-16) whose index i points at data offset offsets[i]; `data` is the raw string area. */
export function stringPoolChunk(offsets: number[], data: Buffer): Buffer {
  const header = 28;
  const stringsStart = header + offsets.length * 4;
  const size = stringsStart + data.length + ((4 - (data.length % 4)) % 4);
  const out = Buffer.alloc(size);
  out.writeUInt16LE(0x0001, 0);
  out.writeUInt16LE(header, 2);
  out.writeUInt32LE(size, 4);
  out.writeUInt32LE(offsets.length, 8);
  out.writeUInt32LE(0, 12); // styles
  out.writeUInt32LE(0, 16); // flags: UTF-16
  out.writeUInt32LE(stringsStart, 20);
  out.writeUInt32LE(0, 24);
  offsets.forEach((o, i) => out.writeUInt32LE(o, header + i * 4));
  data.copy(out, stringsStart);
  return out;
}

/** UTF-16 string-pool data for the given strings, with each string's offset. */
export function utf16Strings(strings: string[]): { offsets: number[]; data: Buffer } {
  const parts: Buffer[] = [];
  const offsets: number[] = [];
  let at = 0;
  for (const s of strings) {
    const body = Buffer.from(s, 'utf16le');
    const piece = Buffer.concat([u16(s.length), body, u16(0)]);
    offsets.push(at);
    parts.push(piece);
    at += piece.length;
  }
  return { offsets, data: Buffer.concat(parts) };
}

function startElement(nameIndex: number, attributes: number): Buffer {
  const ext = Buffer.concat([u32(0xffffffff), u32(nameIndex), u16(20), u16(20), u16(attributes), u16(0), u16(0), u16(0)]);
  // Each attribute: ns, name, raw value, Res_value {size 8, res0, type int-dec, data}.
  const attrs = Buffer.concat(Array.from({ length: attributes }, (_, i) => Buffer.concat([u32(0xffffffff), u32(nameIndex), u32(0xffffffff), u16(8), Buffer.from([0, 0x10]), u32(i)])));
  const body = Buffer.concat([ext, attrs]);
  return Buffer.concat([u16(0x0102), u16(16), u32(16 + body.length), u32(0), u32(0xffffffff), body]);
}

function endElement(nameIndex: number): Buffer {
  return Buffer.concat([u16(0x0103), u16(16), u32(24), u32(0), u32(0xffffffff), u32(0xffffffff), u32(nameIndex)]);
}

/**
 * Binary AXML: a <manifest> root holding `elements` sibling children of `attributes` attributes each, or, with
 * `nested`, a chain of that many elements each inside the previous one.
 */
export function binaryXml(opts: { elements?: number; attributes?: number; nested?: number }): Buffer {
  const { offsets, data } = utf16Strings(['manifest', 'item']);
  const parts: Buffer[] = [stringPoolChunk(offsets, data), startElement(0, 0)];
  const child = Buffer.concat([startElement(1, opts.attributes ?? 0), endElement(1)]);
  parts.push(...Array<Buffer>(opts.elements ?? 0).fill(child));
  parts.push(...Array<Buffer>(opts.nested ?? 0).fill(startElement(1, 0)), ...Array<Buffer>(opts.nested ?? 0).fill(endElement(1)));
  parts.push(endElement(0));
  const body = Buffer.concat(parts);
  return Buffer.concat([u16(0x0003), u16(8), u32(8 + body.length), body]);
}

/**
 * The binary plist of the report: `levels` arrays, each referencing the next one twice, the last one empty.
 * Expanded as a tree it holds 2^levels values; read once per object it holds `levels` + 1.
 */
export function sharedReferencePlist(levels: number): Buffer {
  const objects: Buffer[] = [];
  // Object 0 is a dict {"a": object 2}, object 1 the key "a", objects 2..levels+1 the arrays.
  objects.push(Buffer.from([0xd1, 1, 2]));
  objects.push(Buffer.from([0x51, 0x61]));
  for (let i = 0; i < levels; i++) objects.push(i === levels - 1 ? Buffer.from([0xa0]) : Buffer.from([0xa2, i + 3, i + 3]));
  const count = objects.length;
  if (count > 255) throw new Error('one-byte references only');
  const offsets: number[] = [];
  let at = 8;
  for (const o of objects) { offsets.push(at); at += o.length; }
  const table = Buffer.from(offsets.flatMap((o) => [o >> 8, o & 0xff]));
  const trailer = Buffer.alloc(32);
  trailer[6] = 2; // offset size
  trailer[7] = 1; // reference size
  trailer.writeBigUInt64BE(BigInt(count), 8);
  trailer.writeBigUInt64BE(0n, 16);
  trailer.writeBigUInt64BE(BigInt(at), 24);
  return Buffer.concat([Buffer.from('bplist00'), ...objects, table, trailer]);
}

/**
 * Marker of a binary plist string, data or collection object of `length` (CFBinaryPList.c): the length in the low
 * nibble below 15, else nibble 15 followed by the length as a 4-byte integer object.
 */
export function bplistMarker(kind: number, length: number): Buffer {
  if (length < 15) return Buffer.from([(kind << 4) | length]);
  const b = Buffer.alloc(6);
  b[0] = (kind << 4) | 0x0f;
  b[1] = 0x12;
  b.writeUInt32BE(length, 2);
  return b;
}

/** An array or dictionary object (kind 0xa, 0xd) of two-byte references; a dictionary lists its keys, then its values. */
export function bplistCollection(kind: 0xa | 0xd, refs: number[]): Buffer {
  const body = Buffer.alloc(refs.length * 2);
  refs.forEach((r, i) => body.writeUInt16BE(r, i * 2));
  return Buffer.concat([bplistMarker(kind, kind === 0xd ? refs.length / 2 : refs.length), body]);
}

/**
 * A binary plist whose object area is `area` and whose offset table says object i starts at `starts[i]` (relative to
 * the area), so several objects may share one offset or overlap; object 0 is the top, references are two bytes wide.
 */
export function binaryPlist(area: Buffer, starts: number[]): Buffer {
  const table = Buffer.alloc(starts.length * 4);
  starts.forEach((s, i) => table.writeUInt32BE(8 + s, i * 4));
  const trailer = Buffer.alloc(32);
  trailer[6] = 4; // offset size
  trailer[7] = 2; // reference size
  trailer.writeBigUInt64BE(BigInt(starts.length), 8);
  trailer.writeBigUInt64BE(0n, 16);
  trailer.writeBigUInt64BE(BigInt(8 + area.length), 24);
  return Buffer.concat([Buffer.from('bplist00'), area, table, trailer]);
}

/** Lays objects end to end: the area for binaryPlist and where each object starts in it. */
export function bplistArea(objects: Buffer[]): { area: Buffer; starts: number[] } {
  const starts: number[] = [];
  let at = 0;
  for (const o of objects) {
    starts.push(at);
    at += o.length;
  }
  return { area: Buffer.concat(objects), starts };
}

/** A zip of stored entries, written directly (the `zip` tool is slow for tens of thousands of entries). */
export function storedZip(entries: Array<[string, Buffer]>): Buffer {
  return storedZipWithCentralExtras(entries, 0, 0);
}

/**
 * The same zip, each central-directory record also carrying an extra field of `extraBytes` bytes (one field of an
 * unregistered id, 4 to 65,535 bytes) and a comment of `commentBytes` bytes, as an attacker pads records to make a
 * reader hold more memory per entry; the local headers stay plain.
 */
export function storedZipWithCentralExtras(entries: Array<[string, Buffer]>, extraBytes: number, commentBytes: number): Buffer {
  const extra = extraBytes === 0 ? Buffer.alloc(0) : Buffer.concat([u16(0x6a61), u16(extraBytes - 4), Buffer.alloc(extraBytes - 4, 0x78)]);
  const comment = Buffer.alloc(commentBytes, 0x63);
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const [name, data] of entries) {
    const n = Buffer.from(name);
    const crc = crc32(data);
    const local = Buffer.concat([u32(0x04034b50), u16(20), u16(0), u16(0), u16(0), u16(0), u32(crc), u32(data.length), u32(data.length), u16(n.length), u16(0), n, data]);
    central.push(Buffer.concat([u32(0x02014b50), u16(20), u16(20), u16(0), u16(0), u16(0), u16(0), u32(crc), u32(data.length), u32(data.length), u16(n.length), u16(extra.length), u16(comment.length), u16(0), u16(0), u32(0), u32(offset), n, extra, comment]));
    locals.push(local);
    offset += local.length;
  }
  const cd = Buffer.concat(central);
  const count = Math.min(entries.length, 0xffff);
  const eocd = Buffer.concat([u32(0x06054b50), u16(0), u16(0), u16(count), u16(count), u32(cd.length), u32(offset), u16(0)]);
  return Buffer.concat([...locals, cd, eocd]);
}

/** An empty Zip64 archive whose end records declare `count` entries (more than a plain zip can count). */
export function zip64Declaring(count: number): Buffer {
  const record = Buffer.alloc(56);
  record.writeUInt32LE(0x06064b50, 0);
  record.writeBigUInt64LE(44n, 4);
  record.writeUInt16LE(45, 12);
  record.writeUInt16LE(45, 14);
  record.writeBigUInt64LE(BigInt(count), 24);
  record.writeBigUInt64LE(BigInt(count), 32);
  record.writeBigUInt64LE(0n, 40); // central directory size
  record.writeBigUInt64LE(0n, 48); // central directory offset
  const locator = Buffer.concat([u32(0x07064b50), u32(0), Buffer.alloc(8), u32(1)]);
  const eocd = Buffer.concat([u32(0x06054b50), u16(0), u16(0), u16(0xffff), u16(0xffff), u32(0xffffffff), u32(0xffffffff), u16(0)]);
  return Buffer.concat([record, locator, eocd]);
}
