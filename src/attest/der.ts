/**
 * A strict DER reader for what attestation interprets: certificates of a chain a device sent, the extensions inside
 * them. Unlike the package scan's reader (src/scan/static/signing/der.ts, which must accept the BER that signing
 * tools write), it accepts DER only: definite lengths in their shortest form, single-byte tags, nothing past the end.
 * Anything else is a token that is not what the platform makes (`token_malformed`), never guessed at.
 * Bounded: nothing recurses (each call reads one level), and a container holds at most MAX_CHILDREN values.
 */
export class StrictDerError extends Error {}

export type Tlv = { tag: number; start: number; body: number; end: number };

const MAX_CHILDREN = 256;

export const DER = { BOOLEAN: 0x01, INTEGER: 0x02, BIT_STRING: 0x03, OCTET_STRING: 0x04, OID: 0x06, SEQUENCE: 0x30, SET: 0x31 } as const;

/** The TLV at `at`, ending at or before `limit`. */
export function readTlv(buf: Buffer, at: number, limit = buf.length): Tlv {
  if (at + 2 > limit) throw new StrictDerError('truncated DER header');
  const tag = buf[at];
  if ((tag & 0x1f) === 0x1f) throw new StrictDerError('multi-byte tag');
  let p = at + 1;
  let length = buf[p++];
  if (length === 0x80) throw new StrictDerError('indefinite length');
  if (length & 0x80) {
    const bytes = length & 0x7f;
    if (bytes > 3 || p + bytes > limit) throw new StrictDerError('length too long');
    if (buf[p] === 0) throw new StrictDerError('length not minimal');
    length = 0;
    for (let i = 0; i < bytes; i++) length = length * 256 + buf[p++];
    if (length < 0x80) throw new StrictDerError('length not minimal');
  }
  if (p + length > limit) throw new StrictDerError('value runs past its container');
  return { tag, start: at, body: p, end: p + length };
}

/** The whole buffer as exactly one TLV with the given tag: trailing bytes are refused. */
export function readWhole(buf: Buffer, tag: number): Tlv {
  const t = readTlv(buf, 0);
  if (t.tag !== tag) throw new StrictDerError(`expected tag 0x${tag.toString(16)}`);
  if (t.end !== buf.length) throw new StrictDerError('trailing bytes');
  return t;
}

/** The TLVs directly inside a constructed TLV; they must fill it exactly. */
export function children(buf: Buffer, parent: Tlv): Tlv[] {
  if ((parent.tag & 0x20) === 0) throw new StrictDerError('primitive value has no children');
  const out: Tlv[] = [];
  for (let p = parent.body; p < parent.end; ) {
    if (out.length === MAX_CHILDREN) throw new StrictDerError(`more than ${MAX_CHILDREN} values in one container`);
    const t = readTlv(buf, p, parent.end);
    out.push(t);
    p = t.end;
  }
  return out;
}

/** The contents of a primitive TLV. */
export const bodyOf = (buf: Buffer, t: Tlv): Buffer => buf.subarray(t.body, t.end);

/** The whole encoding of a TLV, tag and length included. */
export const bytesOf = (buf: Buffer, t: Tlv): Buffer => buf.subarray(t.start, t.end);

/** Dotted form of an OBJECT IDENTIFIER. */
export function readOid(buf: Buffer, t: Tlv): string {
  if (t.tag !== DER.OID || t.end === t.body || t.end - t.body > 64) throw new StrictDerError('bad OBJECT IDENTIFIER');
  const parts: number[] = [];
  let value = 0;
  for (let p = t.body; p < t.end; p++) {
    if (value === 0 && buf[p] === 0x80) throw new StrictDerError('OBJECT IDENTIFIER arc not minimal');
    value = value * 128 + (buf[p] & 0x7f);
    if ((buf[p] & 0x80) === 0) {
      if (parts.length === 0) parts.push(value < 80 ? Math.floor(value / 40) : 2, value < 80 ? value % 40 : value - 80);
      else parts.push(value);
      value = 0;
    }
  }
  if (buf[t.end - 1] & 0x80) throw new StrictDerError('OBJECT IDENTIFIER ends inside an arc');
  return parts.join('.');
}

/** What attestation reads of a certificate, located without trusting it (the signature is checked elsewhere). */
export interface CertificateParts {
  der: Buffer;
  /** The DER of the issuer and subject Names: chain links compare them byte for byte. */
  issuer: Buffer;
  subject: Buffer;
  /** The serial number's contents, as lowercase hex without leading zero bytes (as Google's revocation list writes it). */
  serialHex: string;
  /** Extensions by OID: criticality and the contents of the extnValue OCTET STRING. */
  extensions: Map<string, { critical: boolean; value: Buffer }>;
}

/**
 * Splits a certificate: Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signatureValue };
 * TBSCertificate ::= SEQUENCE { [0] version, serialNumber, signature, issuer, validity, subject, spki, [1]?, [2]?, [3] extensions }.
 * A certificate named twice by one extension OID is refused (RFC 5280 4.2).
 */
export function certificateParts(der: Buffer): CertificateParts {
  const cert = readWhole(der, DER.SEQUENCE);
  const top = children(der, cert);
  if (top.length !== 3 || top[0].tag !== DER.SEQUENCE) throw new StrictDerError('not a certificate');
  const tbs = children(der, top[0]);
  let i = 0;
  if (tbs[i]?.tag === 0xa0) i++; // version; v1 certificates leave it out
  const [serial, , issuer, , subject] = tbs.slice(i, i + 5);
  if (!serial || serial.tag !== DER.INTEGER || issuer?.tag !== DER.SEQUENCE || subject?.tag !== DER.SEQUENCE) {
    throw new StrictDerError('not a TBSCertificate');
  }
  const extensions = new Map<string, { critical: boolean; value: Buffer }>();
  const wrapper = tbs.slice(i + 6).find((t) => t.tag === 0xa3);
  if (wrapper) {
    const [list] = children(der, wrapper);
    if (!list || list.tag !== DER.SEQUENCE) throw new StrictDerError('bad extensions');
    for (const ext of children(der, list)) {
      const parts = children(der, ext);
      // Extension ::= SEQUENCE { extnID, critical BOOLEAN DEFAULT FALSE, extnValue }: DER omits a FALSE default, so a
      // middle field is a BOOLEAN TRUE or the extension is not DER.
      if (parts.length !== 2 && parts.length !== 3) throw new StrictDerError('bad extension');
      if (parts.length === 3 && (parts[1].tag !== DER.BOOLEAN || parts[1].end - parts[1].body !== 1 || der[parts[1].body] !== 0xff)) throw new StrictDerError('bad extension');
      const oid = readOid(der, parts[0]);
      const critical = parts.length === 3;
      const value = parts[parts.length - 1];
      if (value.tag !== DER.OCTET_STRING) throw new StrictDerError('bad extension');
      if (extensions.has(oid)) throw new StrictDerError(`extension ${oid} appears twice`);
      extensions.set(oid, { critical, value: bodyOf(der, value) });
    }
  }
  let serialBytes = bodyOf(der, serial);
  while (serialBytes.length > 1 && serialBytes[0] === 0) serialBytes = serialBytes.subarray(1);
  return { der, issuer: bytesOf(der, issuer), subject: bytesOf(der, subject), serialHex: serialBytes.toString('hex'), extensions };
}

/** Splits concatenated DER certificates (the key attestation token), at most `max` of them. */
export function splitCertificates(buf: Buffer, max: number): Buffer[] {
  const out: Buffer[] = [];
  for (let p = 0; p < buf.length; ) {
    if (out.length === max) throw new StrictDerError(`more than ${max} certificates`);
    const t = readTlv(buf, p);
    if (t.tag !== DER.SEQUENCE) throw new StrictDerError('not a certificate');
    out.push(buf.subarray(t.start, t.end));
    p = t.end;
  }
  return out;
}
