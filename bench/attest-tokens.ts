// Attestation tokens for npm run bench:attest: real chains re-keyed so that one can be made per challenge, App Attest
// assertions of a generated key, and the hostile corpus the flood sends.
//
// The real fixtures name one nonce each (the Pixel chain's attestationChallenge is "challenge", the iPhone
// attestation's client data "wurzelpfropf"), and a challenge is single use: they can be verified one at a time only.
// To load the service with many connections, the bench re-keys them: every certificate keeps its bytes (names,
// dates, extensions, the KeyDescription) except its public key, which is a fresh one of the same type (the leaf keeps
// its own: App Attest hashes it into the key id), and its signature, made with the new key of the certificate above; the top one is self-signed and configured as a root
// (ATTEST_GOOGLE_ROOTS / ATTEST_APPLE_ROOTS, beside the real roots). Then the leaf is signed again per challenge with
// only the challenge changed, so each token is the real chain's shape, sizes and algorithms (RSA-4096 root, P-384
// and P-256 links for the Pixel; P-384 and P-256 for Apple), verified by every check the real one goes through.
import { X509Certificate, createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { DER, bytesOf, children, readOid, readWhole } from '../src/attest/der';
import { encode as encodeCbor } from 'cbor2';

const lengthOf = (n: number): number[] =>
  n < 0x80 ? [n] : n < 0x100 ? [0x81, n] : n < 0x10000 ? [0x82, n >> 8, n & 0xff] : [0x83, n >> 16, (n >> 8) & 0xff, n & 0xff];
export const tlv = (tag: number, ...body: Buffer[]): Buffer => {
  const b = Buffer.concat(body);
  return Buffer.concat([Buffer.from([tag, ...lengthOf(b.length)]), b]);
};

/** The hash each signature algorithm of the fixtures uses (ECDSA or RSA PKCS#1 v1.5: node's sign picks by the key). */
const HASH_OF: Record<string, string> = {
  '1.2.840.10045.4.3.2': 'sha256',
  '1.2.840.10045.4.3.3': 'sha384',
  '1.2.840.113549.1.1.11': 'sha256',
  '1.2.840.113549.1.1.12': 'sha384',
};

/** A certificate taken apart: the TBSCertificate's children (DER each), where its SPKI sits, its signature algorithm. */
interface CertTemplate {
  tbsChildren: Buffer[];
  spkiIndex: number;
  sigAlg: Buffer;
  hash: string;
}

function template(der: Buffer): CertTemplate {
  const top = children(der, readWhole(der, DER.SEQUENCE));
  const tbs = children(der, top[0]).map((t) => bytesOf(der, t));
  const spkiIndex = tbs[0][0] === 0xa0 ? 6 : 5;
  const algOid = readOid(der, children(der, top[1])[0]);
  const hash = HASH_OF[algOid];
  if (!hash) throw new Error(`bench: no hash for signature algorithm ${algOid}`);
  return { tbsChildren: tbs, spkiIndex, sigAlg: bytesOf(der, top[1]), hash };
}

/** A fresh key pair of the certificate's own type: the same curve, or an RSA key of the same size. */
function keyLike(der: Buffer): { publicKey: KeyObject; privateKey: KeyObject } {
  const key = new X509Certificate(der).publicKey;
  if (key.asymmetricKeyType === 'ec') return generateKeyPairSync('ec', { namedCurve: key.asymmetricKeyDetails!.namedCurve! });
  if (key.asymmetricKeyType === 'rsa') return generateKeyPairSync('rsa', { modulusLength: key.asymmetricKeyDetails!.modulusLength! });
  throw new Error(`bench: cannot re-key a ${key.asymmetricKeyType} certificate`);
}

const tbsOf = (t: CertTemplate, spki: Buffer): Buffer => tlv(DER.SEQUENCE, ...t.tbsChildren.map((c, i) => (i === t.spkiIndex ? spki : c)));

/**
 * Certificate ::= SEQUENCE { tbs, signatureAlgorithm, BIT STRING signature }, as long as the real one: an ECDSA
 * signature's DER length varies with its integers, so it is made again until it has the length the real one had.
 */
function signed(tbs: Buffer, t: CertTemplate, signer: KeyObject, length: number): Buffer {
  for (let tries = 0; tries < 1000; tries++) {
    const cert = tlv(DER.SEQUENCE, tbs, t.sigAlg, tlv(DER.BIT_STRING, Buffer.from([0]), sign(t.hash, tbs, signer)));
    if (cert.length === length) return cert;
  }
  throw new Error(`bench: no signature gives the certificate its length ${length}`);
}

/** A real chain (leaf first, top last) with every key replaced; `leafFor` signs the leaf again with a byte string swapped. */
export interface RekeyedChain {
  /** The re-keyed certificates, leaf first; the last is self-signed, to be configured as a root. */
  certs: Buffer[];
  rootPem: string;
  /** The root's new private key, to sign more certificates under it. */
  rootKey: KeyObject;
  /** The leaf with `from` (found exactly once in its TBSCertificate) replaced by `to` of the same length, signed again, its length unchanged. */
  leafFor(from: Buffer, to: Buffer): Buffer;
}

/** `rename`: byte strings replaced (same length) in every TBSCertificate, e.g. the root's name, so the real root never matches it. */
export function rekeyChain(real: Buffer[], rename: [string, string][] = []): RekeyedChain {
  const templates = real.map(template);
  for (const t of templates) {
    t.tbsChildren = t.tbsChildren.map((c) => {
      let out = c;
      for (const [from, to] of rename) out = replaceAll(out, Buffer.from(from), Buffer.from(to));
      return out;
    });
  }
  const keys = real.map((der, i) => (i === 0 ? null : keyLike(der)));
  const certs: Buffer[] = new Array(real.length);
  for (let i = real.length - 1; i >= 0; i--) {
    const t = templates[i];
    const spki = keys[i]?.publicKey.export({ type: 'spki', format: 'der' }) ?? t.tbsChildren[t.spkiIndex];
    const signer = keys[Math.min(i + 1, real.length - 1)]!.privateKey;
    certs[i] = signed(tbsOf(t, spki), t, signer, real[i].length);
  }
  const leafTbs = tbsOf(templates[0], templates[0].tbsChildren[templates[0].spkiIndex]);
  return {
    certs,
    rootPem: new X509Certificate(certs[certs.length - 1]).toString(),
    rootKey: keys[keys.length - 1]!.privateKey,
    leafFor(from, to) {
      if (from.length !== to.length) throw new Error('bench: a swapped value keeps its length');
      const at = leafTbs.indexOf(from);
      if (at < 0 || leafTbs.indexOf(from, at + 1) >= 0) throw new Error('bench: the swapped value must appear once in the leaf');
      const tbs = Buffer.from(leafTbs);
      to.copy(tbs, at);
      return signed(tbs, templates[0], keys[1]!.privateKey, certs[0].length);
    },
  };
}

function replaceAll(buf: Buffer, from: Buffer, to: Buffer): Buffer {
  if (from.length !== to.length) throw new Error('bench: a renamed value keeps its length');
  const out = Buffer.from(buf);
  for (let at = out.indexOf(from); at >= 0; at = out.indexOf(from, at + from.length)) to.copy(out, at);
  return out;
}

const sha256 = (...parts: Buffer[]): Buffer => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};

/** An App Attest attestation object of the re-keyed iPhone chain (credCert, intermediate, root) for `nonce`: credCert's nonce extension for it, the rest as the device sent it. */
export function appAttestationFor(
  rekeyed: RekeyedChain, real: { object: Buffer; cred: Buffer; intermediate: Buffer; nonce: Buffer; authData: Buffer }, nonce: string,
): Buffer {
  const cred = rekeyed.leafFor(real.nonce, sha256(real.authData, sha256(Buffer.from(nonce, 'utf8'))));
  // The object as the device encoded it with the two certificates swapped in place (same lengths, so every CBOR
  // header stands): Apple's encoding, not one made here.
  const out = Buffer.from(real.object);
  cred.copy(out, out.indexOf(real.cred));
  rekeyed.certs[1].copy(out, out.indexOf(real.intermediate));
  return out;
}

/** The uncompressed P-256 point App Attest hashes into its key id. */
export function rawPoint(key: KeyObject): Buffer {
  const jwk = key.export({ format: 'jwk' });
  return Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
}

/** An App Attest key as the Secure Enclave holds one: its key id (standard base64 of SHA-256 of the point) and SPKI. */
export function appAttestKey(): { keyId: string; spki: Buffer; privateKey: KeyObject } {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { keyId: sha256(rawPoint(publicKey)).toString('base64'), spki: publicKey.export({ type: 'spki', format: 'der' }), privateKey };
}

/** An assertion (Apple's steps): the signature over SHA-256(authenticatorData ‖ SHA-256(nonce)); `forge` signs something else. */
export function appAssertion(privateKey: KeyObject, app: { teamId: string; bundleId: string }, nonce: string, counter: number, forge = false): Buffer {
  const authenticatorData = Buffer.concat([sha256(Buffer.from(`${app.teamId}.${app.bundleId}`)), Buffer.from([0x40]), Buffer.alloc(4)]);
  authenticatorData.writeUInt32BE(counter, 33);
  const signedOver = sha256(authenticatorData, sha256(Buffer.from(forge ? `${nonce}!` : nonce, 'utf8')));
  const signature = sign('sha256', signedOver, privateKey);
  return Buffer.from(encodeCbor(new Map<string, Uint8Array>([['signature', new Uint8Array(signature)], ['authenticatorData', new Uint8Array(authenticatorData)]])));
}

const oid = (dotted: string): Buffer => {
  const [a, b, ...rest] = dotted.split('.').map(Number);
  const bytes = [a * 40 + b];
  for (const arc of rest) {
    const part = [arc & 0x7f];
    for (let v = arc >> 7; v > 0; v >>= 7) part.unshift((v & 0x7f) | 0x80);
    bytes.push(...part);
  }
  return tlv(DER.OID, Buffer.from(bytes));
};
const utc = (d: string): Buffer => tlv(0x17, Buffer.from(`${d.replace(/[-:T]/g, '').slice(2, 14)}Z`));
const cnName = (cn: string): Buffer => tlv(DER.SEQUENCE, tlv(DER.SET, tlv(DER.SEQUENCE, oid('2.5.4.3'), tlv(0x0c, Buffer.from(cn)))));
const ECDSA_SHA256 = tlv(DER.SEQUENCE, oid('1.2.840.10045.4.3.2'));
const RSA_SHA256 = tlv(DER.SEQUENCE, oid('1.2.840.113549.1.1.11'), Buffer.from([0x05, 0x00]));
const CA = tlv(DER.SEQUENCE, oid('2.5.29.19'), tlv(DER.BOOLEAN, Buffer.from([0xff])), tlv(DER.OCTET_STRING, tlv(DER.SEQUENCE, tlv(DER.BOOLEAN, Buffer.from([0xff])))));

/**
 * A key attestation chain of `length` certificates that links: the re-keyed Pixel leaf's KeyDescription on a leaf,
 * `length - 2` CA certificates, and the re-keyed Pixel root on top (configured), every link signed. The most work a
 * chain the service accepts to read can ask for (MAX_CERTIFICATES is 10): every signature, date and revocation check.
 */
export function longChain(length: number, rekeyed: RekeyedChain): Buffer {
  const root = rekeyed.certs[rekeyed.certs.length - 1];
  const rootSubject = bytesOf(root, children(root, children(root, readWhole(root, DER.SEQUENCE))[0])[5]);
  const keyDescription = leafExtension(rekeyed.certs[0], '1.3.6.1.4.1.11129.2.1.17');
  const keys = Array.from({ length: length - 1 }, () => generateKeyPairSync('ec', { namedCurve: 'P-256' }));
  const names = keys.map((_, i) => (i === 0 ? cnName('Android Keystore Key') : cnName(`Bench CA ${i}`)));
  const out: Buffer[] = [];
  for (let i = 0; i < length - 1; i++) {
    const top = i === length - 2;
    const issuer = top ? rootSubject : names[i + 1];
    const signer = top ? rekeyed.rootKey : keys[i + 1].privateKey;
    const tbs = tlv(
      DER.SEQUENCE,
      tlv(0xa0, tlv(DER.INTEGER, Buffer.from([2]))),
      tlv(DER.INTEGER, Buffer.from([i + 1])),
      top ? RSA_SHA256 : ECDSA_SHA256,
      issuer,
      tlv(DER.SEQUENCE, utc('2020-01-01T00:00:00Z'), utc('2040-01-01T00:00:00Z')),
      names[i],
      keys[i].publicKey.export({ type: 'spki', format: 'der' }),
      tlv(0xa3, tlv(DER.SEQUENCE, i === 0 ? keyDescription : CA)),
    );
    out.push(tlv(DER.SEQUENCE, tbs, top ? RSA_SHA256 : ECDSA_SHA256, tlv(DER.BIT_STRING, Buffer.from([0]), sign('sha256', tbs, signer))));
  }
  return Buffer.concat([...out, root]);
}

/** The whole Extension (OID, criticality, value) of a certificate, by OID. */
function leafExtension(der: Buffer, wanted: string): Buffer {
  const tbs = children(der, children(der, readWhole(der, DER.SEQUENCE))[0]);
  const wrapper = tbs.find((t) => t.tag === 0xa3)!;
  for (const ext of children(der, children(der, wrapper)[0])) {
    if (readOid(der, children(der, ext)[0]) === wanted) return bytesOf(der, ext);
  }
  throw new Error(`bench: no extension ${wanted}`);
}

/** `depth` nested one-element CBOR arrays around a zero: a decoder that recurses per level is what this asks about. */
export function nestedCbor(depth: number): Buffer {
  return Buffer.concat([Buffer.alloc(depth, 0x81), Buffer.from([0x00])]);
}

/** Random base64url text of exactly `chars` characters. */
export function randomToken(chars: number, dots = 0): string {
  const text = randomBytes(Math.ceil((chars * 3) / 4) + 3).toString('base64url').slice(0, chars).split('');
  for (let i = 1; i <= dots; i++) text[Math.floor((i * chars) / (dots + 1))] = '.';
  return text.join('');
}

/** A nonce of `length` base64url characters. */
export const randomNonce = (length: number): string => randomBytes(Math.ceil((length * 3) / 4) + 1).toString('base64url').slice(0, length);
