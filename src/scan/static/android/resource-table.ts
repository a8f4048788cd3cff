import { StringPool, corrupt } from './string-pool';

const RES_TABLE_TYPE = 0x0002;
const RES_STRING_POOL_TYPE = 0x0001;
const RES_TABLE_PACKAGE_TYPE = 0x0200;
const RES_TABLE_TYPE_TYPE = 0x0201;
const TYPE_STRING = 0x03;
const NO_ENTRY = 0xffffffff;
const FLAG_SPARSE = 0x01;
const FLAG_OFFSET16 = 0x02;
const ENTRY_FLAG_COMPLEX = 0x0001;
const ENTRY_FLAG_COMPACT = 0x0008;

/**
 * Resolves a resource id to the file path it names in resources.arsc (any configuration),
 * e.g. 0x7f020000 -> "res/xml/network_security_config.xml". Only what reference-to-file needs.
 * Returns null when the id is absent or not a file; throws on a malformed table.
 */
export function resolveFileReference(arsc: Buffer, id: number): string | null {
  if (arsc.length < 12 || arsc.readUInt16LE(0) !== RES_TABLE_TYPE) throw corrupt('resources.arsc has no table header');
  const end = Math.min(arsc.readUInt32LE(4), arsc.length);
  const packageId = id >>> 24;
  const typeId = (id >>> 16) & 0xff;
  const entryIndex = id & 0xffff;
  let values: StringPool | null = null;
  for (let at = arsc.readUInt16LE(2); at + 8 <= end; ) {
    const { type, size } = chunk(arsc, at, end);
    if (type === RES_STRING_POOL_TYPE && !values) values = new StringPool(arsc, at, at + size);
    else if (type === RES_TABLE_PACKAGE_TYPE && arsc.readUInt32LE(at + 8) === packageId && values) {
      return findInPackage(arsc, at, at + size, typeId, entryIndex, values);
    }
    at += size;
  }
  return null;
}

function findInPackage(buf: Buffer, pkg: number, end: number, typeId: number, entryIndex: number, values: StringPool): string | null {
  for (let at = pkg + buf.readUInt16LE(pkg + 2); at + 8 <= end; ) {
    const { type, headerSize, size } = chunk(buf, at, end);
    if (type === RES_TABLE_TYPE_TYPE && buf[at + 8] === typeId) {
      if (at + headerSize > at + size || headerSize < 20) throw corrupt('resource type chunk header truncated');
      const offset = entryOffset(buf, at, headerSize, size, entryIndex);
      if (offset !== null) {
        const path = fileValue(buf, at + buf.readUInt32LE(at + 16) + offset, at + size, values);
        if (path !== null) return path;
      }
    }
    at += size;
  }
  return null;
}

/** Offset of an entry inside its type chunk's entry data, or null when this configuration lacks it. */
function entryOffset(buf: Buffer, at: number, headerSize: number, size: number, index: number): number | null {
  const flags = buf[at + 9];
  const count = buf.readUInt32LE(at + 12);
  const table = at + headerSize;
  const width = flags & FLAG_SPARSE ? 4 : flags & FLAG_OFFSET16 ? 2 : 4;
  if (table + count * width > at + size) throw corrupt('resource entry table past its chunk');
  if (flags & FLAG_SPARSE) {
    // Sparse tables list (index u16, offset/4 u16) pairs sorted by index.
    for (let i = 0; i < count; i++) {
      if (buf.readUInt16LE(table + i * 4) === index) return buf.readUInt16LE(table + i * 4 + 2) * 4;
    }
    return null;
  }
  if (index >= count) return null;
  if (flags & FLAG_OFFSET16) {
    const o = buf.readUInt16LE(table + index * 2);
    return o === 0xffff ? null : o * 4;
  }
  const o = buf.readUInt32LE(table + index * 4);
  return o === NO_ENTRY ? null : o;
}

function fileValue(buf: Buffer, entry: number, end: number, values: StringPool): string | null {
  if (entry + 8 > end) throw corrupt('resource entry past its chunk');
  const size = buf.readUInt16LE(entry);
  const flags = buf.readUInt16LE(entry + 2);
  if (flags & ENTRY_FLAG_COMPLEX) return null;
  if (flags & ENTRY_FLAG_COMPACT) {
    // Compact entries keep the value type in the high byte of flags and the data in the key slot's place.
    return flags >>> 8 === TYPE_STRING ? values.get(buf.readUInt32LE(entry + 4)) : null;
  }
  const value = entry + size;
  if (value + 8 > end) throw corrupt('resource value past its chunk');
  return buf[value + 3] === TYPE_STRING ? values.get(buf.readUInt32LE(value + 4)) : null;
}

function chunk(buf: Buffer, at: number, end: number): { type: number; headerSize: number; size: number } {
  const type = buf.readUInt16LE(at);
  const headerSize = buf.readUInt16LE(at + 2);
  const size = buf.readUInt32LE(at + 4);
  if (size < 8 || headerSize < 8 || at + size > end) throw corrupt(`resource chunk 0x${type.toString(16)} overruns the table`);
  return { type, headerSize, size };
}
