// A bounded reader for Apple's binary property list format (bplist00, CFBinaryPList.c).
// Written here because bplist-parser expands every reference anew: a 2 KB plist of 26 arrays, each referencing
// the next twice, unfolds to 2^26 values. Here each object is read once per offset (a shared object is the same JS
// value wherever it is referenced, even through several offset-table entries pointing at it), references to an
// object still being read (cycles) are refused, and the tree a reader sees (shared objects counted each time they
// appear) is bounded by LIMITS.plistValues before it is returned. Strings and data are what cost memory outside the
// V8 heap, which the worker's heap limit does not count (every Buffer, and strings over 1 MB): data objects are
// views of the input, not copies, and the bytes decoded into strings and data are bounded by the plist's own length.

import { LimitExceededError } from '../package/errors';
import { LIMITS } from '../package/limits';
import { PlistSyntaxError, type PlistValue } from './xml-plist';

const MAGIC = 'bplist00';
const TRAILER = 32;
// Seconds between the Unix epoch and Apple's reference date, 2001-01-01T00:00:00Z.
const APPLE_EPOCH_S = 978_307_200;
const IN_PROGRESS = Symbol('in progress');

export function isBinaryPlist(buf: Buffer): boolean {
  return buf.length >= 8 && buf.toString('latin1', 0, 8) === MAGIC;
}

/** Parses a binary plist; throws PlistSyntaxError when malformed, LimitExceededError past a cap. */
export function parseBinaryPlist(buf: Buffer): PlistValue {
  if (!isBinaryPlist(buf) || buf.length < 8 + TRAILER) throw new PlistSyntaxError('not a binary plist');
  const t = buf.length - TRAILER;
  const offsetSize = buf[t + 6];
  const refSize = buf[t + 7];
  const count = bigToNumber(buf.readBigUInt64BE(t + 8));
  const top = bigToNumber(buf.readBigUInt64BE(t + 16));
  const tableAt = bigToNumber(buf.readBigUInt64BE(t + 24));
  if (![1, 2, 4, 8].includes(offsetSize) || ![1, 2, 4, 8].includes(refSize)) throw new PlistSyntaxError('bad integer sizes in trailer');
  if (count > LIMITS.plistValues) throw new LimitExceededError('plistValues', `binary plist declares ${count} objects, over the ${LIMITS.plistValues}-value limit`);
  if (count < 1 || top >= count || tableAt < 8 || tableAt + count * offsetSize > t) throw new PlistSyntaxError('bad offset table');

  // Keyed by offset, not by object index: offset-table entries may all point at one object, and an object read
  // once per entry was decoded once per entry (50 entries at one 4 MB string made 200 MB of external strings).
  // `size` is the size of the object's value as a tree (1 for a scalar, 1 + its members' sizes for a collection).
  const objects = new Map<number, { value: PlistValue; size: number } | typeof IN_PROGRESS>();

  const uint = (at: number, size: number): number => {
    if (at + size > t) throw new PlistSyntaxError('value runs into the trailer');
    switch (size) {
      case 1: return buf[at];
      case 2: return buf.readUInt16BE(at);
      case 4: return buf.readUInt32BE(at);
      default: return bigToNumber(buf.readBigUInt64BE(at));
    }
  };
  const offsetOf = (index: number): number => {
    const at = uint(tableAt + index * offsetSize, offsetSize);
    if (at < 8 || at >= tableAt) throw new PlistSyntaxError(`object ${index} lies outside the object area`);
    return at;
  };
  // The length of a data, string or collection: in the marker's low nibble, or an integer object after it.
  const lengthAt = (at: number): [number, number] => {
    const nibble = buf[at] & 0x0f;
    if (nibble !== 0x0f) return [nibble, at + 1];
    const marker = buf[at + 1];
    if (at + 1 >= t || marker >> 4 !== 0x1) throw new PlistSyntaxError('bad length');
    const size = 1 << (marker & 0x0f);
    if (size > 8) throw new PlistSyntaxError('bad length');
    return [uint(at + 2, size), at + 2 + size];
  };
  const span = (start: number, bytes: number): number => {
    if (start + bytes > tableAt) throw new PlistSyntaxError('value runs past the object area');
    return start + bytes;
  };
  const countDecoded = decodedBytesBudget(buf.length);
  // Where the bytes of a data or string object (`unit` bytes a character) start and end, counted as decoded.
  const leafBytes = (at: number, unit: 1 | 2): [number, number] => {
    const [len, start] = lengthAt(at);
    const end = span(start, len * unit);
    countDecoded(len * unit, at);
    return [start, end];
  };

  // Depth-first; recursion is bounded by LIMITS.xmlDepth, and each offset is read at most once.
  const read = (index: number, depth: number): { value: PlistValue; size: number } => {
    if (index >= count) throw new PlistSyntaxError(`reference to object ${index} of ${count}`);
    const at = offsetOf(index);
    const known = objects.get(at);
    if (known === IN_PROGRESS) throw new PlistSyntaxError('reference cycle');
    if (known !== undefined) return known;
    if (depth > LIMITS.xmlDepth) throw new LimitExceededError('xmlDepth', `binary plist nests over ${LIMITS.xmlDepth} levels deep`);
    const marker = buf[at];
    const kind = marker >> 4;
    let value: PlistValue;
    let size = 1;
    switch (kind) {
      case 0x0:
        if (marker === 0x08 || marker === 0x09) value = marker === 0x09;
        else throw new PlistSyntaxError(`unsupported marker 0x${marker.toString(16)}`);
        break;
      case 0x1: {
        const bytes = 1 << (marker & 0x0f);
        if (bytes > 16) throw new PlistSyntaxError('integer too wide');
        span(at + 1, bytes);
        // 16-byte integers keep their low 8 bytes, as CoreFoundation does.
        value = bytes === 16 ? Number(buf.readBigInt64BE(at + 9)) : bytes === 8 ? Number(buf.readBigInt64BE(at + 1)) : uint(at + 1, bytes);
        break;
      }
      case 0x2: {
        const bytes = 1 << (marker & 0x0f);
        span(at + 1, bytes);
        if (bytes === 4) value = buf.readFloatBE(at + 1);
        else if (bytes === 8) value = buf.readDoubleBE(at + 1);
        else throw new PlistSyntaxError('bad real size');
        break;
      }
      case 0x3:
        if (marker !== 0x33) throw new PlistSyntaxError('bad date');
        span(at + 1, 8);
        value = new Date((APPLE_EPOCH_S + buf.readDoubleBE(at + 1)) * 1000);
        break;
      case 0x4: {
        // A view, not a copy: nothing downstream writes to a plist's data.
        const [start, end] = leafBytes(at, 1);
        value = buf.subarray(start, end);
        break;
      }
      case 0x5: {
        const [start, end] = leafBytes(at, 1);
        value = buf.toString('latin1', start, end);
        break;
      }
      case 0x6: {
        const [start, end] = leafBytes(at, 2);
        value = utf16be(buf, start, end);
        break;
      }
      case 0x8: {
        const bytes = (marker & 0x0f) + 1;
        span(at + 1, bytes);
        value = bytes <= 6 ? buf.readUIntBE(at + 1, bytes) : bigToNumber(buf.readBigUInt64BE(at + 1 + bytes - 8));
        break;
      }
      case 0xa:
      case 0xc: {
        const [len, start] = lengthAt(at);
        span(start, len * refSize);
        objects.set(at, IN_PROGRESS);
        const items: PlistValue[] = [];
        for (let i = 0; i < len; i++) {
          const item = read(uint(start + i * refSize, refSize), depth + 1);
          items.push(item.value);
          size += item.size;
          checkSize(size);
        }
        value = items;
        break;
      }
      case 0xd: {
        const [len, start] = lengthAt(at);
        span(start, len * 2 * refSize);
        objects.set(at, IN_PROGRESS);
        const dict: { [key: string]: PlistValue } = Object.create(null);
        for (let i = 0; i < len; i++) {
          const key = read(uint(start + i * refSize, refSize), depth + 1).value;
          if (typeof key !== 'string') throw new PlistSyntaxError('dictionary key is not a string');
          const member = read(uint(start + (len + i) * refSize, refSize), depth + 1);
          dict[key] = member.value;
          size += 1 + member.size;
          checkSize(size);
        }
        value = dict;
        break;
      }
      default:
        throw new PlistSyntaxError(`unsupported marker 0x${marker.toString(16)}`);
    }
    const result = { value, size };
    objects.set(at, result);
    return result;
  };
  return read(top, 0).value;
}

/**
 * A running count, over the whole parse, of the input bytes turned into strings and data; past the plist's own
 * length (or LIMITS.plistDecodedBytes) it is a LimitExceededError. Each offset is decoded once, and objects written
 * side by side cannot add up to more than the file that holds them, so only objects made to overlap reach it.
 */
function decodedBytesBudget(inputBytes: number): (bytes: number, at: number) => void {
  const budget = Math.min(inputBytes, LIMITS.plistDecodedBytes);
  let decoded = 0;
  return (bytes, at) => {
    decoded += bytes;
    if (decoded > budget) {
      throw new LimitExceededError('plistDecodedBytes', `binary plist decodes over ${budget} bytes of strings and data by the object at ${at} (objects side by side decode less than the plist's ${inputBytes} bytes)`);
    }
  };
}

function checkSize(size: number): void {
  if (size > LIMITS.plistValues) throw new LimitExceededError('plistValues', `property list unfolds to over ${LIMITS.plistValues} values`);
}

function utf16be(buf: Buffer, start: number, end: number): string {
  const copy = Buffer.from(buf.subarray(start, end));
  copy.swap16();
  return copy.toString('utf16le');
}

function bigToNumber(v: bigint): number {
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new PlistSyntaxError('integer out of range');
  return Number(v);
}
