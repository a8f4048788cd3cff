// Key attestation chains made here, for what no real chain shows: a software keystore, an imported key, a leaf
// without a root of trust, a tag named twice, version codes past 2^53. A root and a leaf, ECDSA P-256, written with
// a small DER writer (every length minimal) and a KeyDescription from @peculiar/asn1-android, signed with node:crypto.
import { X509Certificate, createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import {
  IntegerSet,
  NonStandardAuthorization,
  NonStandardAuthorizationList,
  NonStandardKeyDescription,
  RootOfTrust,
} from '@peculiar/asn1-android';
import type { TrustRoot } from '../../../src/attest/key-attestation';

const lengthOf = (n: number): number[] => (n < 0x80 ? [n] : n < 0x100 ? [0x81, n] : [0x82, n >> 8, n & 0xff]);
export const tlv = (tag: number, ...body: Buffer[]): Buffer => {
  const b = Buffer.concat(body);
  return Buffer.concat([Buffer.from([tag, ...lengthOf(b.length)]), b]);
};
const seq = (...b: Buffer[]): Buffer => tlv(0x30, ...b);
const set = (...b: Buffer[]): Buffer => tlv(0x31, ...b);
const octet = (b: Buffer): Buffer => tlv(0x04, b);

/** A DER INTEGER from a non-negative bigint, in the fewest bytes. */
export function derInteger(value: bigint): Buffer {
  let hex = value.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  let body = Buffer.from(hex, 'hex');
  if (body[0] & 0x80) body = Buffer.concat([Buffer.from([0]), body]);
  return tlv(0x02, body);
}

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number);
  const bytes = [a * 40 + b];
  for (const arc of rest) {
    const part = [arc & 0x7f];
    for (let v = arc >> 7; v > 0; v >>= 7) part.unshift((v & 0x7f) | 0x80);
    bytes.push(...part);
  }
  return tlv(0x06, Buffer.from(bytes));
}

const name = (cn: string): Buffer => seq(set(seq(oid('2.5.4.3'), tlv(0x0c, Buffer.from(cn)))));
/** UTCTime before 2050, GeneralizedTime from then on (RFC 5280 4.1.2.5). */
function time(d: Date): Buffer {
  const iso = d.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return d.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(`${iso.slice(2)}Z`)) : tlv(0x18, Buffer.from(`${iso}Z`));
}
const ECDSA_SHA256 = seq(oid('1.2.840.10045.4.3.2'));

interface CertSpec {
  serial: bigint;
  issuer: string;
  subject: string;
  notBefore: Date;
  notAfter: Date;
  publicKey: KeyObject;
  signer: KeyObject;
  extensions: Buffer[];
}

function certificate(spec: CertSpec): Buffer {
  const tbs = seq(
    tlv(0xa0, derInteger(2n)),
    derInteger(spec.serial),
    ECDSA_SHA256,
    name(spec.issuer),
    seq(time(spec.notBefore), time(spec.notAfter)),
    name(spec.subject),
    spec.publicKey.export({ type: 'spki', format: 'der' }),
    tlv(0xa3, seq(...spec.extensions)),
  );
  return seq(tbs, ECDSA_SHA256, tlv(0x03, Buffer.from([0]), sign('sha256', tbs, spec.signer)));
}

const BASIC_CONSTRAINTS_CA = seq(oid('2.5.29.19'), tlv(0x01, Buffer.from([0xff])), octet(seq(tlv(0x01, Buffer.from([0xff])))));

/** attestationApplicationId: SEQUENCE { SET OF SEQUENCE { packageName, version }, SET OF digest }. */
export function applicationId(packages: { name: string; version: bigint }[], digestsHex: string[]): Buffer {
  return seq(
    set(...packages.map((p) => seq(octet(Buffer.from(p.name)), derInteger(p.version)))),
    set(...digestsHex.map((d) => octet(Buffer.from(d, 'hex')))),
  );
}

export interface LeafSpec {
  challenge: Buffer;
  /** attestationSecurityLevel and keymasterSecurityLevel: 0 Software, 1 TrustedEnvironment, 2 StrongBox. */
  level: number;
  keymasterLevel?: number;
  /** null: none in the hardware list. */
  rootOfTrust: { locked: boolean; bootState: number } | null;
  /** KeyOrigin, in the hardware list; null: none. */
  origin: number | null;
  /** The attestationApplicationId's DER; null: none. */
  appId: Buffer | null;
  /** Name rootOfTrust twice in the hardware list. */
  rootOfTrustTwice?: boolean;
}

/** The KeyDescription's DER, as a KeyMint 300 keystore writes it (fields in tag order). */
export function keyDescription(spec: LeafSpec): Buffer {
  const item = (v: Partial<NonStandardAuthorization>): NonStandardAuthorization => new NonStandardAuthorization(v);
  const software = [item({ creationDateTime: 1_700_000_000_000 })];
  if (spec.appId) software.push(item({ attestationApplicationId: new OctetString(spec.appId) }));
  const hardware = [item({ purpose: new IntegerSet([2]) }), item({ algorithm: 3 }), item({ keySize: 256 })];
  if (spec.origin !== null) hardware.push(item({ origin: spec.origin }));
  if (spec.rootOfTrust) {
    const rot = new RootOfTrust({
      verifiedBootKey: new OctetString(createHash('sha256').update('boot key').digest()),
      deviceLocked: spec.rootOfTrust.locked,
      verifiedBootState: spec.rootOfTrust.bootState,
      verifiedBootHash: new OctetString(createHash('sha256').update('boot hash').digest()),
    });
    hardware.push(item({ rootOfTrust: rot }));
    if (spec.rootOfTrustTwice) hardware.push(item({ rootOfTrust: rot }));
  }
  hardware.push(item({ osVersion: 150000 }), item({ osPatchLevel: 202610 }));
  const kd = new NonStandardKeyDescription({
    attestationVersion: 300,
    attestationSecurityLevel: spec.level,
    keymasterVersion: 300,
    keymasterSecurityLevel: spec.keymasterLevel ?? spec.level,
    attestationChallenge: new OctetString(spec.challenge),
    uniqueId: new OctetString(0),
    softwareEnforced: new NonStandardAuthorizationList(software),
    teeEnforced: new NonStandardAuthorizationList(hardware),
  });
  return Buffer.from(AsnConvert.serialize(kd));
}

const KEY_DESCRIPTION_OID = '1.3.6.1.4.1.11129.2.1.17';
const ROOT_NOT_BEFORE = new Date('2020-01-01T00:00:00Z');
const ROOT_NOT_AFTER = new Date('2040-01-01T00:00:00Z');

/** A root (CA, self-signed) and a leaf carrying the KeyDescription, and the root as a trust anchor. */
export function syntheticChain(spec: LeafSpec): { chain: Buffer; root: TrustRoot; certs: Buffer[] } {
  const rootKey = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const leafKey = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const rootDer = certificate({
    serial: 0x5e17e57n, issuer: 'Synthetic Attestation Root', subject: 'Synthetic Attestation Root',
    notBefore: ROOT_NOT_BEFORE, notAfter: ROOT_NOT_AFTER, publicKey: rootKey.publicKey, signer: rootKey.privateKey,
    extensions: [BASIC_CONSTRAINTS_CA],
  });
  const leafDer = certificate({
    // Serial 1 and a far notAfter as KeyMint writes them; notBefore not KeyMint's 1970 (a real root signs an
    // intermediate, never the leaf, and the engine wants the root valid when it issued the certificate below it).
    serial: 1n, issuer: 'Synthetic Attestation Root', subject: 'Android Keystore Key',
    notBefore: new Date('2025-01-01T00:00:00Z'), notAfter: new Date('2048-01-01T00:00:00Z'), publicKey: leafKey.publicKey, signer: rootKey.privateKey,
    extensions: [seq(oid(KEY_DESCRIPTION_OID), octet(keyDescription(spec)))],
  });
  const cert = new X509Certificate(rootDer);
  return { chain: Buffer.concat([leafDer, rootDer]), certs: [leafDer, rootDer], root: { cert, notBefore: ROOT_NOT_BEFORE, notAfter: ROOT_NOT_AFTER } };
}
