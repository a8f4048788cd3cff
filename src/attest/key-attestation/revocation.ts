/**
 * Google's attestation key revocation list (the `status.json` served at https://android.googleapis.com/attestation/status;
 * format and schema in https://developer.android.com/privacy-and-security/security-key-attestation, "Certificate
 * revocation status list"). The service reads it once at start-up (the built-in snapshot, or ATTEST_REVOCATION_LIST),
 * so a file that is not exactly that schema stops it with one line instead of leaving it checking fewer keys than the
 * operator meant. Verification never fetches it: the CONTRACT forbids remote calls while verifying.
 */
export type RevocationStatus = 'REVOKED' | 'SUSPENDED';

export interface RevocationList {
  /**
   * Serial -> status, keyed as Google writes the serial: lowercase hex without leading zeros, except that some
   * 64-bit serials of early keys are written in decimal (`6681152659205225093` is 0x5cb838f1fe157a85). Look serials up
   * with `revocationStatus`, which tries both spellings.
   */
  entries: ReadonlyMap<string, RevocationStatus>;
}

/**
 * Google's list holds under two thousand entries (well under 1 MB); these bounds only stop a wrong file being read whole.
 * 100,000 of the shortest entries fit in 5 MB, so each bound can be reached on its own.
 */
const MAX_BYTES = 5 * 1024 * 1024;
const MAX_ENTRIES = 100_000;
const STATUSES: ReadonlySet<string> = new Set(['REVOKED', 'SUSPENDED']);
const REASONS: ReadonlySet<string> = new Set(['UNSPECIFIED', 'KEY_COMPROMISE', 'CA_COMPROMISE', 'SUPERSEDED', 'SOFTWARE_FLAW']);
const FIELDS: ReadonlySet<string> = new Set(['status', 'expires', 'reason', 'comment']);
/** Google's schema: `propertyNames` lowercase hex. A serial is at most 20 octets (RFC 5280 4.1.2.2): 40 digits. */
const SERIAL = /^[0-9a-f]{1,40}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const clip = (s: string): string => JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s);

/** Parses a revocation list in Google's schema; throws a one-line Error naming the first thing that is not. */
export function parseRevocationList(json: string): RevocationList {
  if (typeof json !== 'string' || json.length > MAX_BYTES || Buffer.byteLength(json) > MAX_BYTES) {
    throw new Error('revocation list: not text of at most 5 MB');
  }
  let doc: unknown;
  try {
    doc = JSON.parse(json);
  } catch {
    throw new Error('revocation list: not JSON');
  }
  // The schema's top level: `required: ["entries"], additionalProperties: false`.
  if (!isObject(doc) || !isObject(doc.entries) || Object.keys(doc).length !== 1) {
    throw new Error('revocation list: not an object {"entries": {...}} and nothing else');
  }
  const serials = Object.keys(doc.entries);
  if (serials.length > MAX_ENTRIES) throw new Error(`revocation list: more than ${MAX_ENTRIES} entries`);
  const entries = new Map<string, RevocationStatus>();
  for (const serial of serials) {
    const entry = doc.entries[serial];
    const where = `revocation list: entry ${clip(serial)}`;
    if (!SERIAL.test(serial)) throw new Error(`${where}: the key is not a lowercase hex serial`);
    if (!isObject(entry)) throw new Error(`${where}: not an object`);
    const unknown = Object.keys(entry).find((k) => !FIELDS.has(k));
    if (unknown !== undefined) throw new Error(`${where}: unknown field ${clip(unknown)}`);
    const { status, expires, reason, comment } = entry;
    if (typeof status !== 'string' || !STATUSES.has(status)) throw new Error(`${where}: status is not REVOKED or SUSPENDED`);
    if (reason !== undefined && (typeof reason !== 'string' || !REASONS.has(reason))) throw new Error(`${where}: unknown reason`);
    if (expires !== undefined && (typeof expires !== 'string' || !DATE.test(expires) || Number.isNaN(Date.parse(expires)))) {
      throw new Error(`${where}: expires is not a YYYY-MM-DD date`);
    }
    if (comment !== undefined && (typeof comment !== 'string' || [...comment].length > 140)) {
      throw new Error(`${where}: comment is not text of at most 140 characters`);
    }
    // `expires` is when the certificate itself expires (the schema: "can be used to clear expired certificates"); an
    // expired certificate fails on its dates anyway, so the entry is kept whatever the date.
    const key = serial.replace(/^0+(?=.)/, '');
    if (entries.get(key) !== 'REVOKED') entries.set(key, status as RevocationStatus);
  }
  return { entries };
}

/**
 * The status of a certificate serial (its DER contents as lowercase hex, leading zero bytes allowed), or null. Tries
 * the hex spelling without leading zeros and the decimal one: Google's live list writes some 64-bit serials in decimal,
 * and a hex-only lookup would miss every one of them.
 */
export function revocationStatus(list: RevocationList, serialHex: string): RevocationStatus | null {
  const hex = serialHex.toLowerCase().replace(/^0+(?=.)/, '');
  if (!/^[0-9a-f]+$/.test(hex)) return null;
  return list.entries.get(hex) ?? list.entries.get(BigInt(`0x${hex}`).toString(10)) ?? null;
}
