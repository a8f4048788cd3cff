/** A DER tag-length-value: `start` is the first byte of the tag, `body` of the contents, `end` one past them. */
export type Tlv = { tag: number; start: number; body: number; end: number };

export class DerError extends Error {}

/** Reads the TLV at `at`; only definite lengths (DER) are accepted, and nothing may run past `limit`. */
export function readTlv(buf: Buffer, at: number, limit = buf.length): Tlv {
  if (at + 2 > limit) throw new DerError('truncated DER header');
  const tag = buf[at];
  if ((tag & 0x1f) === 0x1f) throw new DerError('multi-byte DER tags are not used by X.509 or PKCS#7');
  let p = at + 1;
  let length = buf[p++];
  if (length === 0x80) throw new DerError('indefinite-length BER is not DER');
  if (length & 0x80) {
    const bytes = length & 0x7f;
    if (bytes > 4 || p + bytes > limit) throw new DerError('DER length too long');
    length = 0;
    for (let i = 0; i < bytes; i++) length = length * 256 + buf[p++];
  }
  if (p + length > limit) throw new DerError('DER value runs past its container');
  return { tag, start: at, body: p, end: p + length };
}

/** The TLVs directly inside a constructed TLV. */
export function children(buf: Buffer, parent: Tlv): Tlv[] {
  const out: Tlv[] = [];
  for (let p = parent.body; p < parent.end; ) {
    const t = readTlv(buf, p, parent.end);
    out.push(t);
    p = t.end;
  }
  return out;
}

/** Dotted form of an OBJECT IDENTIFIER TLV. */
export function readOid(buf: Buffer, t: Tlv): string {
  if (t.tag !== 0x06 || t.end === t.body) throw new DerError('expected an OBJECT IDENTIFIER');
  const parts: number[] = [];
  let value = 0;
  for (let p = t.body; p < t.end; p++) {
    value = value * 128 + (buf[p] & 0x7f);
    if ((buf[p] & 0x80) === 0) {
      if (parts.length === 0) parts.push(value < 80 ? Math.floor(value / 40) : 2, value < 80 ? value % 40 : value - 80);
      else parts.push(value);
      value = 0;
    }
  }
  return parts.join('.');
}

export const TAG = { SEQUENCE: 0x30, SET: 0x31, OID: 0x06, INTEGER: 0x02, CONTEXT_0: 0xa0 } as const;
