/**
 * Strict base64 and base64url. Node's decoder skips characters outside the alphabet and reads `+/` and `-_` alike, so
 * two different texts can decode to the same bytes: a mutated token would then verify for the wrong reason. These
 * accept one spelling per byte string: the alphabet only, no whitespace, and the text must be what encoding the
 * bytes gives back (padding as Node writes it for base64, none for base64url).
 */
const BASE64URL = /^[A-Za-z0-9_-]*$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The bytes of base64url text (no padding), or null when the text is not exactly that. */
export function strictBase64url(text: string): Buffer | null {
  if (!BASE64URL.test(text) || text.length % 4 === 1) return null;
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : null;
}

/** The bytes of standard, padded base64 text, or null when the text is not exactly that. */
export function strictBase64(text: string): Buffer | null {
  if (!BASE64.test(text) || text.length % 4 !== 0) return null;
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64') === text ? bytes : null;
}
