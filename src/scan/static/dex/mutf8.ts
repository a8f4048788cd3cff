import { isAscii } from 'node:buffer';
import { UnreadablePackageError } from '../package/errors';

/** A malformed DEX file: the analyser skips such a file, as ART's verifier refuses to load it. */
export function corruptDex(why: string): UnreadablePackageError {
  return new UnreadablePackageError('corrupt-manifest', `malformed DEX file: ${why}`);
}

/**
 * Reads a uleb128 at `at` (DEX "Leb128" encoding): at most 5 bytes, and the fifth carries only the top 4 bits of
 * a 32-bit value, as ART's DexFileVerifier requires; anything longer is refused, so a run of 0x80 bytes cannot
 * make the read go on. Returns the value and the offset after it.
 */
export function readUleb128(buf: Buffer, at: number, end: number): { value: number; next: number } {
  let value = 0;
  for (let i = 0; i < 5; i++) {
    if (at + i >= end) throw corruptDex('uleb128 runs past the end of the file');
    const b = buf[at + i];
    if (i === 4 && b > 0x0f) throw corruptDex('uleb128 longer than 32 bits');
    value += (b & 0x7f) * 2 ** (7 * i);
    if ((b & 0x80) === 0) return { value, next: at + i + 1 };
  }
  throw corruptDex('uleb128 longer than 5 bytes');
}

/** Scratch for decoding non-ASCII strings, grown on demand and reused (one DEX file is read at a time). */
let scratch = new Uint16Array(256);

/**
 * Decodes one string_data_item's MUTF-8 bytes (from `at`, `units` UTF-16 code units, then a NUL byte) as ART does:
 * 1-byte ASCII (never 0), 2-byte forms (C0 80 being U+0000), 3-byte forms (each half of a surrogate pair is its own
 * 3-byte sequence, and lone surrogates are kept as they are), no 4-byte forms and no overlong forms other than
 * C0 80 (DexFileVerifier::CheckIntraStringDataItem refuses them). Returns the string and the bytes it took.
 */
export function decodeMutf8(buf: Buffer, at: number, units: number, end: number): { value: string; bytes: number } {
  if (units > end - at) throw corruptDex(`string of ${units} characters runs past the end of the file`);
  // ASCII, the common case: as many bytes as code units, then the NUL; decoded natively.
  if (at + units < end && buf[at + units] === 0) {
    const bytes = buf.subarray(at, at + units);
    if (isAscii(bytes) && bytes.indexOf(0) < 0) return { value: bytes.toString('latin1'), bytes: units };
  }
  if (scratch.length < units) scratch = new Uint16Array(Math.max(units, scratch.length * 2));
  let p = at;
  for (let i = 0; i < units; i++) {
    if (p >= end) throw corruptDex('string runs past the end of the file');
    const b = buf[p];
    if (b === 0) throw corruptDex('string shorter than its declared length');
    if (b < 0x80) {
      scratch[i] = b;
      p += 1;
    } else if ((b & 0xe0) === 0xc0) {
      const c = continuation(buf, p + 1, end);
      const unit = ((b & 0x1f) << 6) | c;
      if (unit !== 0 && unit < 0x80) throw corruptDex('overlong 2-byte MUTF-8 sequence');
      scratch[i] = unit;
      p += 2;
    } else if ((b & 0xf0) === 0xe0) {
      const unit = ((b & 0x0f) << 12) | (continuation(buf, p + 1, end) << 6) | continuation(buf, p + 2, end);
      if (unit < 0x800) throw corruptDex('overlong 3-byte MUTF-8 sequence');
      scratch[i] = unit;
      p += 3;
    } else {
      throw corruptDex(`illegal MUTF-8 byte 0x${b.toString(16)}`);
    }
  }
  if (p >= end || buf[p] !== 0) throw corruptDex('string longer than its declared length');
  return { value: Buffer.from(scratch.buffer, 0, units * 2).toString('utf16le'), bytes: p - at };
}

function continuation(buf: Buffer, at: number, end: number): number {
  if (at >= end) throw corruptDex('MUTF-8 sequence runs past the end of the file');
  const b = buf[at];
  if ((b & 0xc0) !== 0x80) throw corruptDex('MUTF-8 sequence without its continuation byte');
  return b & 0x3f;
}
