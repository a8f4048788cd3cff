/** Random access to a library's bytes (a stored zip entry read in place, or a deflated one's retained ranges). */
export type ElfSource = {
  size: number;
  /** Exactly `length` bytes from `offset`; the reader only asks for ranges inside [0, size). */
  read(offset: number, length: number): Promise<Buffer>;
};

/** A file that is not an ELF file, or an ELF file no loader would accept: the library is reported as unreadable. */
export class MalformedElfError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MalformedElfError';
  }
}

type Load = { offset: number; vaddr: number; filesz: number };

/** Integers of one buffer, in the file's byte order; reads past the buffer throw MalformedElfError. */
export class Fields {
  constructor(private readonly buf: Buffer, private readonly little: boolean) {}

  private check(at: number, n: number): void {
    if (at < 0 || at + n > this.buf.length) throw new MalformedElfError(`field at ${at} lies outside the ${this.buf.length} bytes read`);
  }

  u8(at: number): number {
    this.check(at, 1);
    return this.buf[at];
  }

  u16(at: number): number {
    this.check(at, 2);
    return this.little ? this.buf.readUInt16LE(at) : this.buf.readUInt16BE(at);
  }

  u32(at: number): number {
    this.check(at, 4);
    return this.little ? this.buf.readUInt32LE(at) : this.buf.readUInt32BE(at);
  }

  /** A 64-bit offset, size or address: one past 2^53 cannot lie inside any file, so it is refused here. */
  word(at: number): number {
    const value = this.wordOrInfinity(at);
    if (!Number.isFinite(value)) throw new MalformedElfError(`64-bit value at ${at} is past 2^53`);
    return value;
  }

  /** A 64-bit value, Infinity when past 2^53 (for values that may be ignored, such as a dynamic entry's). */
  wordOrInfinity(at: number): number {
    this.check(at, 8);
    const v = this.little ? this.buf.readBigUInt64LE(at) : this.buf.readBigUInt64BE(at);
    return v > BigInt(Number.MAX_SAFE_INTEGER) ? Infinity : Number(v);
  }

  /** A 64-bit dynamic tag; null when it does not fit 32 bits (no tag the reader uses does). */
  tag64(at: number): number | null {
    this.check(at, 8);
    const high = this.little ? this.buf.readUInt32LE(at + 4) : this.buf.readUInt32BE(at);
    const low = this.little ? this.buf.readUInt32LE(at) : this.buf.readUInt32BE(at + 4);
    return high === 0 ? low : null;
  }
}

/** An ELF file being read: its class and byte order, and reads that never leave the file. */
export class ElfView {
  readonly size: number;

  constructor(private readonly src: ElfSource, readonly elfClass: 32 | 64, readonly endian: 'little' | 'big') {
    this.size = src.size;
  }

  on(buf: Buffer): Fields {
    return new Fields(buf, this.endian === 'little');
  }

  /** `length` bytes at `offset`, refused (MalformedElfError) when any of them lies outside the file. */
  async read(offset: number, length: number): Promise<Buffer> {
    if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0 || offset + length > this.size) {
      throw new MalformedElfError(`range of ${length} bytes at offset ${offset} lies outside the ${this.size}-byte file`);
    }
    if (length === 0) return Buffer.alloc(0);
    return this.src.read(offset, length);
  }

  /**
   * The file offset of `length` bytes at virtual address `addr`, through the PT_LOAD segment holding them (as the
   * dynamic linker maps it), refused when no segment's file bytes hold the whole range.
   */
  fileOffset(loads: readonly Load[], addr: number, length: number, what: string): number {
    for (const l of loads) {
      if (addr >= l.vaddr && addr + length <= l.vaddr + l.filesz) {
        const offset = l.offset + (addr - l.vaddr);
        if (offset + length <= this.size) return offset;
      }
    }
    throw new MalformedElfError(`${what} (address 0x${Number.isFinite(addr) ? addr.toString(16) : 'huge'}, ${length} bytes) is in no PT_LOAD segment's file bytes`);
  }
}
