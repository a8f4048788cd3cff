import { LimitExceededError } from '../package/errors';
import { LIMITS } from '../package/limits';
import { corruptDex, decodeMutf8, readUleb128 } from './mutf8';

/** What the DEX header says about the two tables read here (the rest of the file is never looked at). */
export type DexHeader = {
  version: number;
  headerSize: number;
  stringIdsSize: number;
  stringIdsOff: number;
  typeIdsSize: number;
  typeIdsOff: number;
};

const HEADER_MIN = 0x70;
const ENDIAN_CONSTANT = 0x12345678;
/** type_ids are indexed by 16-bit type indices (dex-format.html, "type_ids"). */
const MAX_TYPE_IDS = 0x10000;

/**
 * The string table of one DEX file (dex-format.html: header_item, string_id_item, string_data_item, type_id_item),
 * read on demand: nothing is kept but the file itself, so a caller that visits strings one by one holds one string at
 * a time. Every offset and count is checked against the file before use; the bytes decoded are counted against
 * LIMITS.dexDecodedBytes, because crafted string_ids may all point at one long string. Throws UnreadablePackageError
 * (corruptDex) on a malformed file and LimitExceededError at a cap.
 */
export class DexStrings {
  readonly header: DexHeader;
  private decoded = 0;

  constructor(private readonly buf: Buffer) {
    this.header = readDexHeader(buf);
  }

  get count(): number {
    return this.header.stringIdsSize;
  }

  /** The string at `index` of string_ids. */
  at(index: number): string {
    return this.decodeAt(index, 0) as string;
  }

  /**
   * Every string of at least `minUnits` UTF-16 code units, in table order, one at a time: shorter ones are skipped
   * on their declared length, without being decoded.
   */
  *strings(minUnits = 0): Generator<string> {
    for (let i = 0; i < this.header.stringIdsSize; i++) {
      const s = this.decodeAt(i, minUnits);
      if (s !== null) yield s;
    }
  }

  private decodeAt(index: number, minUnits: number): string | null {
    if (!Number.isInteger(index) || index < 0 || index >= this.header.stringIdsSize) throw corruptDex(`string index ${index} outside the table`);
    const end = this.buf.length;
    const dataOff = this.buf.readUInt32LE(this.header.stringIdsOff + index * 4);
    if (dataOff < this.header.headerSize || dataOff >= end) throw corruptDex(`string_data_off ${dataOff} outside the file`);
    const { value: units, next } = readUleb128(this.buf, dataOff, end);
    if (units < minUnits) return null;
    const { value, bytes } = decodeMutf8(this.buf, next, units, end);
    this.decoded += bytes + 1;
    if (this.decoded > LIMITS.dexDecodedBytes) {
      throw new LimitExceededError('dexDecodedBytes', `a DEX file decodes to over ${LIMITS.dexDecodedBytes} bytes of strings`);
    }
    return value;
  }

  /** Every type descriptor (`Lcom/example/Main;`, `[I`), in type_ids order. */
  *typeDescriptors(): Generator<string> {
    const { typeIdsOff, typeIdsSize } = this.header;
    for (let i = 0; i < typeIdsSize; i++) yield this.at(this.buf.readUInt32LE(typeIdsOff + i * 4));
  }
}

/** The header fields this reader uses, each checked against the file. */
export function readDexHeader(buf: Buffer): DexHeader {
  if (buf.length < HEADER_MIN) throw corruptDex(`${buf.length} bytes, shorter than a DEX header`);
  const magic = buf.toString('latin1', 0, 8);
  const m = /^dex\n(\d{3})\0$/.exec(magic);
  const version = m ? Number(m[1]) : NaN;
  if (!(version >= 35 && version <= 41)) throw corruptDex('no dex\\n035 to dex\\n041 magic');
  const fileSize = buf.readUInt32LE(32);
  if (fileSize > buf.length) throw corruptDex(`header declares ${fileSize} bytes, the file has ${buf.length}`);
  const headerSize = buf.readUInt32LE(36);
  if (headerSize < HEADER_MIN || headerSize > buf.length) throw corruptDex(`header_size ${headerSize}`);
  // ART loads only little-endian files (REVERSE_ENDIAN_CONSTANT is refused by DexFileVerifier).
  if (buf.readUInt32LE(40) !== ENDIAN_CONSTANT) throw corruptDex('endian_tag is not the little-endian constant');
  const header: DexHeader = {
    version,
    headerSize,
    stringIdsSize: buf.readUInt32LE(56),
    stringIdsOff: buf.readUInt32LE(60),
    typeIdsSize: buf.readUInt32LE(64),
    typeIdsOff: buf.readUInt32LE(68),
  };
  if (header.stringIdsSize > LIMITS.dexStrings) {
    throw new LimitExceededError('dexStrings', `a DEX file declares ${header.stringIdsSize} strings, over the ${LIMITS.dexStrings} limit`);
  }
  checkTable(buf, 'string_ids', header.stringIdsOff, header.stringIdsSize, headerSize);
  if (header.typeIdsSize > MAX_TYPE_IDS) throw corruptDex(`${header.typeIdsSize} type_ids, over the 65536 a 16-bit index reaches`);
  checkTable(buf, 'type_ids', header.typeIdsOff, header.typeIdsSize, headerSize);
  return header;
}

/** A table of 4-byte items lies after the header and inside the file (an empty table may have offset 0). */
function checkTable(buf: Buffer, name: string, off: number, size: number, headerSize: number): void {
  if (size === 0) return;
  if (off < headerSize || off + size * 4 > buf.length) throw corruptDex(`${name} (${size} at ${off}) outside the file`);
}

/** The whole string table and the type descriptors of one DEX file, for callers that want them at once. */
export function readDexStrings(bytes: Buffer): { strings: string[]; typeDescriptors: string[] } {
  const dex = new DexStrings(bytes);
  return { strings: [...dex.strings()], typeDescriptors: [...dex.typeDescriptors()] };
}

/**
 * The Java package of a class descriptor (`Lcom/google/firebase/analytics/FirebaseAnalytics;` ->
 * `com.google.firebase.analytics`); null for primitives, arrays and classes of the unnamed package.
 */
export function descriptorPackage(descriptor: string): string | null {
  if (descriptor.length < 3 || descriptor[0] !== 'L' || !descriptor.endsWith(';')) return null;
  const slash = descriptor.lastIndexOf('/');
  if (slash < 2) return null;
  return descriptor.slice(1, slash).replace(/\//g, '.');
}
