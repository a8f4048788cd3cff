// Hostile DEX files: every malformed one is refused quickly (UnreadablePackageError) or stops at a cap
// (LimitExceededError), never a RangeError, a hang or unbounded memory. Crafted from a real smali file and by hand.
import { readFile } from 'node:fs/promises';
import { DexStrings, readDexStrings } from '../../../src/scan/static/dex/dex-strings';
import { LimitExceededError, UnreadablePackageError } from '../../../src/scan/static/package/errors';
import { LIMITS } from '../../../src/scan/static/package/limits';
import { dexCorpus } from '../../fixtures/dex-corpus';

jest.setTimeout(240_000);

/** A minimal DEX: header, string_ids, type_ids (all strings' indices), then each string_data_item as given. */
function craftDex(items: Buffer[], opts: { ids?: number[]; types?: number[] } = {}): Buffer {
  const ids = opts.ids ?? items.map((_, i) => i);
  const types = opts.types ?? [];
  const idsOff = 0x70;
  const typesOff = idsOff + ids.length * 4;
  let dataOff = typesOff + types.length * 4;
  const itemOffsets = items.map((it) => {
    const at = dataOff;
    dataOff += it.length;
    return at;
  });
  const buf = Buffer.alloc(dataOff);
  buf.write('dex\n035\0', 0, 'latin1');
  buf.writeUInt32LE(buf.length, 32);
  buf.writeUInt32LE(0x70, 36);
  buf.writeUInt32LE(0x12345678, 40);
  buf.writeUInt32LE(ids.length, 56);
  buf.writeUInt32LE(ids.length ? idsOff : 0, 60);
  buf.writeUInt32LE(types.length, 64);
  buf.writeUInt32LE(types.length ? typesOff : 0, 68);
  ids.forEach((item, i) => buf.writeUInt32LE(itemOffsets[item], idsOff + i * 4));
  types.forEach((t, i) => buf.writeUInt32LE(t, typesOff + i * 4));
  items.forEach((it, i) => it.copy(buf, itemOffsets[i]));
  return buf;
}

/** A string_data_item: uleb128 UTF-16 length, the bytes, a NUL. */
const item = (units: number[], bytes: number[]) => Buffer.from([...units, ...bytes, 0]);

function outcome(bytes: Buffer): string {
  try {
    readDexStrings(bytes);
    return 'read';
  } catch (err) {
    if (err instanceof LimitExceededError) return `limit:${err.limit}`;
    if (err instanceof UnreadablePackageError) return 'corrupt';
    throw err;
  }
}

describe('DEX reader on hostile input', () => {
  test('the hand-made DEX is read (the tests below change one thing of it)', () => {
    const dex = craftDex([item([3], [0x61, 0x62, 0x63]), item([1], [0xc0, 0x80])], { types: [0] });
    expect(readDexStrings(dex)).toEqual({ strings: ['abc', '\u0000'], typeDescriptors: ['abc'] });
  });

  test('every truncation of a real DEX file is refused or read, never a crash', async () => {
    const file = (await dexCorpus()).fixtures.find((f) => f.name === 'smali-mutf8')!.file;
    const real = await readFile(file);
    for (let n = 0; n < real.length; n++) {
      const cut = Buffer.from(real.subarray(0, n));
      // The header's file_size no longer matches: refused, like ART does.
      expect(outcome(cut)).toBe('corrupt');
      // With file_size patched to the cut length, what is left is read as far as it is consistent.
      if (n >= 0x70) {
        cut.writeUInt32LE(n, 32);
        expect(['read', 'corrupt']).toContain(outcome(cut));
      }
    }
  });

  test('offsets and counts past the end of the file', () => {
    const base = craftDex([item([2], [0x68, 0x69])], { types: [0] });
    const at = (offset: number, value: number) => {
      const b = Buffer.from(base);
      b.writeUInt32LE(value >>> 0, offset);
      return b;
    };
    expect(outcome(at(60, base.length))).toBe('corrupt'); // string_ids_off past the end
    expect(outcome(at(56, 1000))).toBe('corrupt'); // string_ids_size past the end
    expect(outcome(at(0x70, base.length + 10))).toBe('corrupt'); // string_data_off past the end
    expect(outcome(at(0x70, 4))).toBe('corrupt'); // string_data_off inside the header
    expect(outcome(at(0x74, 7))).toBe('corrupt'); // type_ids names a string index outside the table
    expect(outcome(at(64, 0x10001))).toBe('corrupt'); // more type_ids than a 16-bit index reaches
    expect(outcome(at(56, 2 ** 31))).toBe('limit:dexStrings'); // 2^31 strings: refused before anything is read
    expect(outcome(at(56, LIMITS.dexStrings))).toBe('corrupt'); // at the cap, the table is past the end of the file
    expect(outcome(at(32, base.length + 1))).toBe('corrupt'); // file_size larger than the file
    expect(outcome(at(36, 0x10))).toBe('corrupt'); // header_size below the header
    expect(outcome(at(40, 0x78563412))).toBe('corrupt'); // big-endian tag, which ART does not load
    const magic = (m: string) => {
      const b = Buffer.from(base);
      b.write(m, 0, 'latin1');
      return b;
    };
    expect(outcome(magic('dex\n034\0'))).toBe('corrupt');
    expect(outcome(magic('dex\n042\0'))).toBe('corrupt');
    expect(outcome(magic('dey\n035\0'))).toBe('corrupt');
    expect(outcome(magic('dex\n041\0'))).toBe('read');
    expect(outcome(Buffer.alloc(0x6f))).toBe('corrupt');
  });

  test('bad MUTF-8: forms ART\'s verifier refuses are refused', () => {
    const bad: Array<[string, Buffer]> = [
      ['4-byte UTF-8 (not MUTF-8)', item([2], [0xf0, 0x9f, 0x98, 0x80])],
      ['lone continuation byte', item([1], [0x80])],
      ['overlong 2-byte form of "A"', item([1], [0xc1, 0x81])],
      ['overlong 3-byte form', item([1], [0xe0, 0x80, 0x80])],
      ['2-byte form without its continuation', item([1], [0xc3, 0x41])],
      ['3-byte form cut by the NUL', item([1], [0xe4, 0xb8])],
      ['raw NUL inside the declared length', item([3], [0x61, 0x00, 0x62])],
      ['more bytes than the declared length', item([1], [0x61, 0x62])],
      ['declared length past the end', item([100], [0x61])],
    ];
    for (const [why, it] of bad) expect([why, outcome(craftDex([it]))]).toEqual([why, 'corrupt']);
    // The forms that are valid: C0 80 for U+0000, each surrogate its own 3-byte sequence, U+FFFF.
    const good = craftDex([item([4], [0xc0, 0x80, 0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80, 0xef, 0xbf, 0xbf])]);
    expect(readDexStrings(good).strings).toEqual(['\u0000😀\uffff']);
  });

  test('uleb128: five bytes at most, the fifth holding 4 bits', () => {
    expect(outcome(craftDex([Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0x00])]))).toBe('corrupt');
    expect(outcome(craftDex([Buffer.from([0x80, 0x80, 0x80, 0x80, 0x10, 0x00])]))).toBe('corrupt');
    // A valid but redundant 2-byte length (0x81 0x00 = 1) is read as dexdump reads it.
    expect(readDexStrings(craftDex([Buffer.from([0x81, 0x00, 0x7a, 0x00])])).strings).toEqual(['z']);
    // A uleb128 cut by the end of the file.
    expect(outcome(craftDex([Buffer.from([0x80])]))).toBe('corrupt');
  });

  test('string_ids all pointing at one long string stop at the decoded-bytes cap, in bounded time', () => {
    const long = Buffer.alloc(1024 * 1024, 0x61);
    const units = [0x80 | (long.length & 0x7f), 0x80 | ((long.length >> 7) & 0x7f), long.length >> 14];
    const ids = new Array(200).fill(0);
    const started = Date.now();
    const dex = new DexStrings(craftDex([Buffer.concat([Buffer.from(units), long, Buffer.from([0])])], { ids }));
    let read = 0;
    expect(() => {
      for (const s of dex.strings()) read += s.length;
    }).toThrow(LimitExceededError);
    expect(read).toBeLessThanOrEqual(LIMITS.dexDecodedBytes);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
