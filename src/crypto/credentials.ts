/**
 * Parses the bearer credentials the service issues. Everything here handles untrusted text: it only says what shape
 * the text has; whether it is valid is for the auth service to decide.
 */

export type ParsedCredential =
  | { kind: 'api_key'; mode: 'live' | 'test'; id: string; secret: string }
  | { kind: 'staff'; id: string; secret: string }
  | { kind: 'jwt'; token: string };

const API_KEY = /^svc_(live|test)_([A-Za-z0-9]{8,40})_([A-Za-z0-9_-]{20,100})$/;
const STAFF_TOKEN = /^stf_([A-Za-z0-9]{8,40})_([A-Za-z0-9_-]{20,100})$/;
const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const MAX_CREDENTIAL_LENGTH = 4096;

/** Reads `Authorization: Bearer <credential>`; null for anything else (absent, other scheme, malformed). */
export function parseBearer(header: string | undefined): ParsedCredential | null {
  if (!header || header.length > MAX_CREDENTIAL_LENGTH + 7) return null;
  const match = /^Bearer ([^\s]+)$/i.exec(header.trim());
  if (!match) return null;
  const unverified = match[1];
  let m = API_KEY.exec(unverified);
  if (m) return { kind: 'api_key', mode: m[1] as 'live' | 'test', id: m[2], secret: m[3] };
  m = STAFF_TOKEN.exec(unverified);
  if (m) return { kind: 'staff', id: m[1], secret: m[2] };
  if (JWT.test(unverified)) return { kind: 'jwt', token: unverified };
  return null;
}

export function formatApiKey(mode: 'live' | 'test', id: string, secret: string): string {
  return `svc_${mode}_${id}_${secret}`;
}

export function formatStaffToken(id: string, secret: string): string {
  return `stf_${id}_${secret}`;
}
