/**
 * Recognises a compact JWS (`<header>.<payload>.<signature>`, base64url parts, the header a JSON object naming an
 * `alg`) anywhere in a text, so the dry-run can refuse a pasted token instead of storing or echoing it. Linear: the
 * text is cut at every character that cannot be in a token, each run split at its dots, and only a part that could
 * be a header is decoded.
 */
const NOT_IN_TOKEN = /[^A-Za-z0-9_.-]+/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const MAX_HEADER_PART = 4096;

function isJwsHeader(part: string): boolean {
  if (part.length < 8 || part.length > MAX_HEADER_PART || !BASE64URL.test(part)) return false;
  try {
    const header: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return typeof header === 'object' && header !== null && !Array.isArray(header) && typeof (header as { alg?: unknown }).alg === 'string';
  } catch {
    return false;
  }
}

/** Whether the text holds something shaped like a compact JWS (a JWT, signed or not). */
export function containsCompactJws(text: string): boolean {
  for (const run of text.split(NOT_IN_TOKEN)) {
    const parts = run.split('.');
    for (let i = 0; i + 2 < parts.length; i++) {
      if (isJwsHeader(parts[i]) && BASE64URL.test(parts[i + 1])) return true;
    }
  }
  return false;
}
