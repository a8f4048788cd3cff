/** A malformed length-prefixed structure of the APK Signing Block (apksig's ApkFormatException / BufferUnderflow). */
export class FormatError extends Error {}

/** Reads the little-endian, uint32-length-prefixed records of the APK Signing Block, refusing any overrun. */
export class Reader {
  private p = 0;
  constructor(readonly buf: Buffer) {}

  get remaining(): number {
    return this.buf.length - this.p;
  }

  u32(): number {
    if (this.remaining < 4) throw new FormatError('truncated integer');
    const v = this.buf.readUInt32LE(this.p);
    this.p += 4;
    return v;
  }

  /** A signed int32, as Java's getInt reads SDK versions. */
  i32(): number {
    if (this.remaining < 4) throw new FormatError('truncated integer');
    const v = this.buf.readInt32LE(this.p);
    this.p += 4;
    return v;
  }

  /** The next uint32-length-prefixed slice (a view, never a copy). */
  prefixed(): Buffer {
    const len = this.u32();
    if (len > this.remaining) throw new FormatError(`length ${len} runs past the ${this.remaining} bytes left`);
    const out = this.buf.subarray(this.p, this.p + len);
    this.p += len;
    return out;
  }

  /** Every length-prefixed slice to the end, at most `max` (more is a FormatError the caller names). */
  all(max: number): Buffer[] {
    const out: Buffer[] = [];
    while (this.remaining > 0) {
      if (out.length >= max) throw new FormatError(`more than ${max} records`);
      out.push(this.prefixed());
    }
    return out;
  }
}
