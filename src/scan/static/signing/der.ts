import { LimitExceededError } from '../package/errors';
import { LIMITS } from '../package/limits';

/**
 * A BER/DER tag-length-value: `start` is the first byte of the tag, `body` of the contents, `bodyEnd` one past the
 * contents and `end` one past the whole TLV. They differ only for an indefinite length (BER), whose contents are
 * followed by a two-byte end-of-contents marker.
 */
export type Tlv = { tag: number; start: number; body: number; bodyEnd: number; end: number };

export class DerError extends Error {}

const CONSTRUCTED = 0x20;

/**
 * Reads the TLV at `at`; nothing may run past `limit`. Definite lengths (DER) and, for constructed values, the
 * indefinite length of BER (as `openssl cms -sign -stream` writes and Android's verifier accepts) are read.
 * Finding where an indefinite value ends walks its contents, at most LIMITS.derDepth levels deep, so the cost
 * stays linear in the input times that depth.
 */
export function readTlv(buf: Buffer, at: number, limit = buf.length, depth = 0): Tlv {
  if (depth > LIMITS.derDepth) throw new LimitExceededError('derDepth', `ASN.1 nested over ${LIMITS.derDepth} levels deep`);
  if (at + 2 > limit) throw new DerError('truncated DER header');
  const tag = buf[at];
  if ((tag & 0x1f) === 0x1f) throw new DerError('multi-byte DER tags are not used by X.509 or PKCS#7');
  let p = at + 1;
  let length = buf[p++];
  if (length === 0x80) {
    if ((tag & CONSTRUCTED) === 0) throw new DerError('indefinite length on a primitive value');
    for (let q = p; ; ) {
      if (q + 2 > limit) throw new DerError('indefinite-length value has no end-of-contents');
      if (buf[q] === 0 && buf[q + 1] === 0) return { tag, start: at, body: p, bodyEnd: q, end: q + 2 };
      q = readTlv(buf, q, limit, depth + 1).end;
    }
  }
  if (length & 0x80) {
    const bytes = length & 0x7f;
    if (bytes > 4 || p + bytes > limit) throw new DerError('DER length too long');
    length = 0;
    for (let i = 0; i < bytes; i++) length = length * 256 + buf[p++];
  }
  if (p + length > limit) throw new DerError('DER value runs past its container');
  return { tag, start: at, body: p, bodyEnd: p + length, end: p + length };
}

/** The TLVs directly inside a constructed TLV, at most `max` of them. */
export function children(buf: Buffer, parent: Tlv, max = Infinity, depth = 0): Tlv[] {
  const out: Tlv[] = [];
  for (let p = parent.body; p < parent.bodyEnd && out.length < max; ) {
    const t = readTlv(buf, p, parent.bodyEnd, depth + 1);
    out.push(t);
    p = t.end;
  }
  return out;
}

/** Dotted form of an OBJECT IDENTIFIER TLV. */
export function readOid(buf: Buffer, t: Tlv): string {
  if (t.tag !== 0x06 || t.end === t.body) throw new DerError('expected an OBJECT IDENTIFIER');
  // Real OIDs are under 20 bytes; a longer one is not one the rules know, and stays cheap to reject.
  if (t.end - t.body > 64) throw new DerError('OBJECT IDENTIFIER too long');
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
