import { LimitExceededError, UnreadablePackageError } from '../package/errors';
import { LIMITS } from '../package/limits';

const UTF8_FLAG = 1 << 8;

/**
 * A ResStringPool chunk (binary XML and resources.arsc); strings are decoded on first use, once per data offset:
 * any number of indices naming the same bytes share one string. Crafted offsets can still make entries overlap, so
 * the bytes decoded are counted against LIMITS.stringPoolBytes.
 */
export class StringPool {
  private readonly cache = new Map<number, string>();
  private decodedBytes = 0;
  private readonly count: number;
  private readonly utf8: boolean;
  private readonly offsetsAt: number;
  private readonly dataAt: number;

  /** `at` is the offset of the chunk header inside `buf`; `end` the end of the chunk. */
  constructor(private readonly buf: Buffer, at: number, private readonly end: number) {
    if (at + 28 > end) throw corrupt('string pool header truncated');
    const headerSize = buf.readUInt16LE(at + 2);
    this.count = buf.readUInt32LE(at + 8);
    const flags = buf.readUInt32LE(at + 16);
    this.utf8 = (flags & UTF8_FLAG) !== 0;
    this.offsetsAt = at + headerSize;
    this.dataAt = at + buf.readUInt32LE(at + 20);
    if (this.offsetsAt + this.count * 4 > end || this.dataAt > end) throw corrupt('string pool offsets past its chunk');
  }

  get size(): number {
    return this.count;
  }

  /** String at index, or null for the "no string" index 0xffffffff. */
  get(index: number): string | null {
    if (index === 0xffffffff) return null;
    if (index >= this.count) throw corrupt(`string index ${index} outside pool of ${this.count}`);
    const at = this.dataAt + this.buf.readUInt32LE(this.offsetsAt + index * 4);
    let s = this.cache.get(at);
    if (s === undefined) {
      s = this.decode(at);
      this.cache.set(at, s);
    }
    return s;
  }

  private decode(at: number): string {
    if (this.utf8) {
      // UTF-8 strings carry their UTF-16 length, then their byte length, each in 1 or 2 bytes.
      let p = at + (this.byte(at) & 0x80 ? 2 : 1);
      let len = this.byte(p);
      if (len & 0x80) {
        len = ((len & 0x7f) << 8) | this.byte(p + 1);
        p += 2;
      } else {
        p += 1;
      }
      this.check(p + len);
      this.countDecoded(len);
      return this.buf.toString('utf8', p, p + len);
    }
    let len = this.u16(at);
    let p = at + 2;
    if (len & 0x8000) {
      len = ((len & 0x7fff) << 16) | this.u16(at + 2);
      p += 2;
    }
    this.check(p + len * 2);
    this.countDecoded(len * 2);
    return this.buf.toString('utf16le', p, p + len * 2);
  }

  private countDecoded(bytes: number): void {
    this.decodedBytes += bytes;
    if (this.decodedBytes > LIMITS.stringPoolBytes) {
      throw new LimitExceededError('stringPoolBytes', `a string pool decodes to over ${LIMITS.stringPoolBytes} bytes`);
    }
  }

  private byte(at: number): number {
    this.check(at + 1);
    return this.buf[at];
  }

  private u16(at: number): number {
    this.check(at + 2);
    return this.buf.readUInt16LE(at);
  }

  private check(limit: number): void {
    if (limit > this.end) throw corrupt('string runs past its pool');
  }
}

export function corrupt(why: string): UnreadablePackageError {
  return new UnreadablePackageError('corrupt-manifest', `malformed compiled XML: ${why}`);
}
