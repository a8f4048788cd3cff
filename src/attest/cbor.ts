import { Tag, decode } from 'cbor2';

/**
 * Strict CBOR (RFC 8949) for the App Attest objects a device sends. One byte string must have one reading: a token
 * written any other way than the platform writes it is refused (`token_malformed`), never normalised, so a mutated
 * token cannot verify for the wrong reason. cbor2 does the reading with every strict option on; what it still accepts
 * (tags, integers beyond 2^53) is refused by the walk below, which also hands back fresh values: a Map for every map
 * (no `__proto__` key on a plain object), Buffers for byte strings, copied out of the input.
 */
export class CborError extends Error {}

/** Tokens are at most 8,192 base64url characters (6,144 bytes); 8 KiB leaves room and no more. */
export const MAX_CBOR_BYTES = 8192;

/**
 * The depth an attestation object needs (map, attStmt map, x5c array, certificate bytes) and no more. cbor2 counts an
 * array's items one level deeper than a map's values, so four is also the smallest depth that reads one.
 */
const DEFAULT_MAX_DEPTH = 4;

const STRICT = {
  rejectDuplicateKeys: true,
  rejectStreaming: true, // indefinite lengths
  requirePreferred: true, // integers and lengths in their shortest form
  rejectFloats: true,
  rejectSimple: true,
  rejectUndefined: true,
  rejectLargeNegatives: true,
  // No tag decoder runs on untrusted input (dates, regular expressions, embedded CBOR): a tag stays a Tag, and the
  // walk refuses it. Bignums (tags 2 and 3) are refused that way too, so cbor2's rejectBigInts would never fire.
  ignoreGlobalTags: true,
  preferMap: true,
} as const;

/** The one data item `bytes` holds, or CborError. */
export function decodeStrictCbor(bytes: Buffer, opts: { maxDepth?: number } = {}): unknown {
  if (bytes.length > MAX_CBOR_BYTES) throw new CborError(`CBOR larger than ${MAX_CBOR_BYTES} bytes`);
  let raw: unknown;
  try {
    raw = decode(bytes, { ...STRICT, maxDepth: opts.maxDepth ?? DEFAULT_MAX_DEPTH });
  } catch (err) {
    // cbor2 throws Error, RangeError (reading past the end), TypeError (an 8-byte length, text that is not UTF-8):
    // all mean the same here. The message is read without instanceof: under Jest, TextDecoder throws from another realm.
    const message = (err as { message?: unknown } | null)?.message;
    throw new CborError(typeof message === 'string' ? message : 'unreadable CBOR');
  }
  return fresh(raw);
}

/** The decoded value rebuilt from the types a strict item may hold; recursion is bounded by maxDepth above. */
function fresh(value: unknown): unknown {
  if (typeof value === 'string' || typeof value === 'boolean' || value === null) return value;
  if (typeof value === 'number') return value; // floats are refused by the decoder: this is an integer
  if (value instanceof Uint8Array) return Buffer.from(value);
  if (Array.isArray(value)) return value.map(fresh);
  if (value instanceof Map) return new Map([...value].map(([k, v]) => [fresh(k), fresh(v)]));
  if (value instanceof Tag) throw new CborError(`tag ${value.tag} not allowed`);
  if (typeof value === 'bigint') throw new CborError('integer beyond 2^53');
  throw new CborError('unexpected CBOR value');
}
