/**
 * X.500 names compared as apksig compares them: a PKCS#7 SignerInfo names its certificate by issuer and serial, and
 * apksig finds that certificate with `new X500Principal(issuer).equals(cert.getIssuerX500Principal())`, which
 * compares the names' RFC 2253 canonical forms (Java's X500Name.getRFC2253CanonicalName). Real signing tools encode
 * the same issuer differently (PrintableString in the SignerInfo, UTF8String in the certificate), so a byte
 * comparison refuses packages Android installs. The canonical form, as Java makes it:
 * - RDNs in order; the attributes of a multi-valued RDN sorted by their canonical text;
 * - a PrintableString or UTF8String value (the only ones Java treats as strings here) trimmed, each run of
 *   whitespace cut to its first character, upper-cased then lower-cased, and NFKD-normalised;
 * - any other value (T61String, BMPString, IA5String, a number) compared as its DER bytes.
 */
import { children, DerError, readOid, readTlv, TAG } from './der';

const PRINTABLE_STRING = 0x13;
const UTF8_STRING = 0x0c;

/** The canonical form of a DER Name, one string per RDN; throws DerError on a malformed name. */
export function canonicalName(der: Buffer): string[] {
  const name = readTlv(der, 0);
  if (name.tag !== TAG.SEQUENCE) throw new DerError('a Name is a SEQUENCE');
  return children(der, name).map((rdn) => {
    if (rdn.tag !== TAG.SET) throw new DerError('an RDN is a SET');
    return children(der, rdn).map((ava) => {
      const [type, value] = children(der, ava, 3);
      if (ava.tag !== TAG.SEQUENCE || !type || !value) throw new DerError('an attribute is a SEQUENCE of a type and a value');
      return `${readOid(der, type)}=${canonicalValue(der.subarray(value.start, value.end), value.tag, der.subarray(value.body, value.bodyEnd))}`;
    }).sort().join('+');
  });
}

function canonicalValue(encoded: Buffer, tag: number, content: Buffer): string {
  if (tag !== PRINTABLE_STRING && tag !== UTF8_STRING) return `#${encoded.toString('hex')}`;
  const text = content.toString(tag === UTF8_STRING ? 'utf8' : 'latin1');
  // String.trim() drops every character up to U+0020; then each whitespace run keeps its first character.
  const trimmed = text.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '').replace(/(\s)\s+/g, '$1');
  return `"${trimmed.toUpperCase().toLowerCase().normalize('NFKD')}"`;
}

/** True when two DER Names are the same name as apksig (X500Principal.equals) sees it; false when either is malformed. */
export function sameName(a: Buffer, b: Buffer): boolean {
  if (a.equals(b)) return true;
  try {
    const x = canonicalName(a);
    const y = canonicalName(b);
    return x.length === y.length && x.every((rdn, i) => rdn === y[i]);
  } catch {
    return false;
  }
}
