import { corrupt } from './string-pool';

/** One field of a protobuf message: varints as numbers, length-delimited fields as sub-buffers. */
export type ProtoField = {
  field: number;
  varint: number;
  /** Low 32 bits of a varint, exact even when `varint` is not (negative int32 values use 10 bytes). */
  low32: number;
  bytes: Buffer | null;
};

/**
 * Minimal protobuf wire-format reader, enough for aapt2's XmlNode.
 * Varints above 2^53 lose precision, which no field the rules read can reach.
 * Fields are yielded one at a time, never collected: a message of millions of tiny fields costs no memory beyond
 * what the caller keeps (collecting them cost about 167 times the message's size).
 */
export function* readFields(buf: Buffer): Generator<ProtoField> {
  for (let p = 0; p < buf.length; ) {
    const [key, afterKey] = readVarint(buf, p);
    const field = Math.floor(key / 8);
    const wire = key % 8;
    p = afterKey;
    if (wire === 0) {
      const [v, next, low32] = readVarint(buf, p);
      p = next;
      yield { field, varint: v, low32, bytes: null };
    } else if (wire === 2) {
      const [len, next] = readVarint(buf, p);
      if (next + len > buf.length) throw corrupt('protobuf field runs past its message');
      p = next + len;
      yield { field, varint: 0, low32: 0, bytes: buf.subarray(next, next + len) };
    } else if (wire === 5) {
      if (p + 4 > buf.length) throw corrupt('truncated fixed32');
      const v = buf.readUInt32LE(p);
      p += 4;
      yield { field, varint: v, low32: v, bytes: null };
    } else if (wire === 1) {
      if (p + 8 > buf.length) throw corrupt('truncated fixed64');
      p += 8;
    } else {
      throw corrupt(`unsupported protobuf wire type ${wire}`);
    }
  }
}

/** The first field numbered `field`, read no further than needed. */
export function firstField(buf: Buffer, field: number): ProtoField | undefined {
  for (const f of readFields(buf)) if (f.field === field) return f;
  return undefined;
}

function readVarint(buf: Buffer, at: number): [number, number, number] {
  let value = 0;
  let low32 = 0;
  let scale = 1;
  for (let p = at; p < buf.length && p < at + 10; p++) {
    value += (buf[p] & 0x7f) * scale;
    // `<<` works on 32 bits, so bits beyond the 32nd fall away, which is what low32 wants.
    if (p - at < 5) low32 = (low32 | ((buf[p] & 0x7f) << (7 * (p - at)))) >>> 0;
    if ((buf[p] & 0x80) === 0) return [value, p + 1, low32];
    scale *= 128;
  }
  throw corrupt('truncated varint');
}

export function str(f: ProtoField): string {
  return f.bytes ? f.bytes.toString('utf8') : '';
}
