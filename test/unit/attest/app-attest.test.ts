// Protects: the App Attest engine (Apple's attestation and assertion checks). Every real attestation verifies at its
// own time for its own app and yields the keyId the source computed, and is refused today as expired; every real
// assertion verifies with its key and reads the source's counter; each mutation is refused with the reason of the
// check it breaks; a malformed token is `token_malformed` and nothing else; the engine never throws.
import { X509Certificate, createHash, createPublicKey } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { type AppAttestApp, type AppAttestKey, verifyAppAssertion, verifyAppAttestation } from '../../../src/attest/app-attest';
import { decodeStrictCbor } from '../../../src/attest/cbor';
import { ATTEST_REASONS } from '../../../src/attest/reasons';
import { APPLE_APP_ATTEST_ROOTS } from '../../../src/attest/roots/apple';
import { appAttestSeeds, fuzzAppAttest } from '../../fuzz/app-attest-target';
import { applyMutation, mutation } from '../../fuzz/mutate';

const DIR = path.join(__dirname, '../../fixtures/attestation/apple-app-attest');
const TODAY = new Date('2026-11-29T12:00:00Z');
const DAY = 24 * 3600 * 1000;

interface Fixture {
  file: string;
  teamId: string;
  bundleId: string;
  environment: 'production' | 'development' | null;
  keyId: string;
  attestation: string | null;
  clientDataHash?: string;
  verifyAt: string | null;
  derived?: { credCert: { notBefore: string; notAfter: string } };
  assertion: { assertion: string; clientDataHash: string; publicKeyPem: string; expectedCounter: number } | null;
}

const FIXTURES: Fixture[] = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((file) => ({ file, ...(JSON.parse(readFileSync(path.join(DIR, file), 'utf8')) as Omit<Fixture, 'file'>) }));
const ATTESTATIONS = FIXTURES.filter((f) => f.attestation);
const ASSERTIONS = FIXTURES.filter((f) => f.assertion);
const ROOTS = [new X509Certificate(readFileSync(path.join(DIR, 'apple-app-attestation-root-ca.pem')))];

const b64 = (text: string) => Buffer.from(text, 'base64');
const appOf = (f: Fixture): AppAttestApp => ({ teamId: f.teamId, bundleId: f.bundleId, environment: f.environment ?? 'development' });
const spkiOf = (pem: string) => createPublicKey(pem).export({ type: 'spki', format: 'der' });
const flip = (buf: Buffer, at: number) => {
  const out = Buffer.from(buf);
  out[at] ^= 0x01;
  return out;
};

/** Verifies `f`'s attestation at its verifyAt with its own app, nonce and roots, changed by `change`. */
function attest(f: Fixture, change: Partial<Parameters<typeof verifyAppAttestation>[0]> = {}) {
  return verifyAppAttestation({
    object: b64(f.attestation!),
    clientDataHash: b64(f.clientDataHash!),
    app: appOf(f),
    keyId: f.keyId,
    roots: ROOTS,
    now: new Date(f.verifyAt!),
    ...change,
  });
}

// ---- a minimal CBOR writer for mutants: definite lengths, shortest forms unless told otherwise ----
type Item = number | string | Buffer | Item[] | Map<Item, Item>;
function head(major: number, n: number): Buffer {
  if (n < 24) return Buffer.from([(major << 5) | n]);
  if (n < 0x100) return Buffer.from([(major << 5) | 24, n]);
  if (n < 0x10000) return Buffer.from([(major << 5) | 25, n >> 8, n & 0xff]);
  const out = Buffer.alloc(5);
  out[0] = (major << 5) | 26;
  out.writeUInt32BE(n, 1);
  return out;
}
function cbor(v: Item): Buffer {
  if (typeof v === 'number') return v >= 0 ? head(0, v) : head(1, -1 - v);
  if (typeof v === 'string') return Buffer.concat([head(3, Buffer.byteLength(v)), Buffer.from(v)]);
  if (Buffer.isBuffer(v)) return Buffer.concat([head(2, v.length), v]);
  if (Array.isArray(v)) return Buffer.concat([head(4, v.length), ...v.map(cbor)]);
  return Buffer.concat([head(5, v.size), ...[...v].flatMap(([k, x]) => [cbor(k), cbor(x)])]);
}

/** The parts of an attestation object, read with the fixture's own derived values (not with the engine). */
interface Parts {
  cred: Buffer;
  intermediate: Buffer;
  authData: Buffer;
  receipt: Buffer;
}
function partsOf(f: Fixture): Parts {
  const der = (pem: string) => new X509Certificate(pem).raw;
  const j = JSON.parse(readFileSync(path.join(DIR, f.file), 'utf8')) as {
    derived: { credCertPem: string; intermediateCaPem: string; authDataBase64: string; receiptBase64: string };
  };
  return { cred: der(j.derived.credCertPem), intermediate: der(j.derived.intermediateCaPem), authData: b64(j.derived.authDataBase64), receipt: b64(j.derived.receiptBase64) };
}
const objectOf = (p: Parts, x5c: Buffer[] = [p.cred, p.intermediate], fmt = 'apple-appattest') =>
  cbor(new Map<Item, Item>([['fmt', fmt], ['attStmt', new Map<Item, Item>([['x5c', x5c], ['receipt', p.receipt]])], ['authData', p.authData]]));

const V = FIXTURES.find((f) => f.file === 'veehaitch-ios-14.2.json')!;
const OTHER = FIXTURES.find((f) => f.file === 'veehaitch-ios-14.3.json')!;
const VP = partsOf(V);
const withObject = (object: Buffer) => attest(V, { object });

describe('real attestations', () => {
  it('holds the fixtures the tests are about: 9 attestations, 8 assertions', () => {
    expect([ATTESTATIONS.length, ASSERTIONS.length]).toEqual([9, 8]);
  });

  it('the writer above reproduces the device bytes, so a mutant differs only where the test changes it', () => {
    for (const f of ATTESTATIONS) expect(objectOf(partsOf(f)).equals(b64(f.attestation!))).toBe(true);
  });

  it.each(ATTESTATIONS.map((f) => [f.file, f]))('%s verifies at its verifyAt and yields the source keyId and key', (_n, f) => {
    const result = attest(f);
    expect(result.reasons).toEqual([]);
    expect(result.key?.keyId).toBe(f.keyId);
    // The veehaitch sources also give the key the first assertion verifies with: the same key.
    if (f.assertion) expect(result.key!.publicKeySpki.equals(spkiOf(f.assertion.publicKeyPem))).toBe(true);
    expect(attest(f, { keyId: null }).key?.keyId).toBe(f.keyId); // the client need not send a keyId
  });

  it.each(ATTESTATIONS.map((f) => [f.file, f]))('%s is refused as expired today, after its credCert and before it', (_n, f) => {
    const { notBefore, notAfter } = f.derived!.credCert;
    for (const now of [TODAY, new Date(Date.parse(notAfter) + DAY), new Date(Date.parse(notBefore) - DAY)]) {
      expect(attest(f, { now })).toEqual({ reasons: ['certificate_expired'] });
    }
  });

  it.each(ATTESTATIONS.map((f) => [f.file, f]))('%s: a byte of the clientDataHash changed is challenge_mismatch', (_n, f) => {
    expect(attest(f, { clientDataHash: flip(b64(f.clientDataHash!), 31) })).toEqual({ reasons: ['challenge_mismatch'] });
  });

  it.each(ATTESTATIONS.map((f) => [f.file, f]))('%s for the other environment is environment_mismatch', (_n, f) => {
    const environment = f.environment === 'production' ? 'development' : 'production';
    expect(attest(f, { app: { ...appOf(f), environment } })).toEqual({ reasons: ['environment_mismatch'] });
  });

  it.each(ATTESTATIONS.map((f) => [f.file, f]))('%s for another team or bundle is team_mismatch', (_n, f) => {
    expect(attest(f, { app: { ...appOf(f), teamId: 'AAAAAAAAAA' } })).toEqual({ reasons: ['team_mismatch'] });
    expect(attest(f, { app: { ...appOf(f), bundleId: `${f.bundleId}x` } })).toEqual({ reasons: ['team_mismatch'] });
  });

  it.each(ATTESTATIONS.map((f) => [f.file, f]))('%s with another keyId in the request is key_unknown', (_n, f) => {
    const other = ATTESTATIONS.find((o) => o.keyId !== f.keyId)!;
    expect(attest(f, { keyId: other.keyId })).toEqual({ reasons: ['key_unknown'] });
  });

  it('refuses a chain to no configured root, and accepts only a root that signed the intermediate', () => {
    expect(attest(V, { roots: [] })).toEqual({ reasons: ['chain_untrusted'] });
    expect(attest(V, { roots: [new X509Certificate(VP.intermediate)] })).toEqual({ reasons: ['chain_untrusted'] });
  });
});

describe('mutated attestations', () => {
  // authData is inside the nonce (SHA-256(authData ‖ clientDataHash)), so every change to it breaks the nonce too;
  // both reasons are reported, because each comparison runs.
  const authDataMutant = (change: (a: Buffer) => void) => {
    const authData = Buffer.from(VP.authData);
    change(authData);
    return withObject(objectOf({ ...VP, authData }));
  };

  it('authData: rpIdHash, counter, aaguid, credentialId, COSE key each name their check', () => {
    expect(authDataMutant((a) => (a[0] ^= 1))).toEqual({ reasons: ['challenge_mismatch', 'team_mismatch'] });
    expect(authDataMutant((a) => a.writeUInt32BE(1, 33))).toEqual({ reasons: ['challenge_mismatch', 'counter_replayed'] });
    expect(authDataMutant((a) => (a[40] ^= 1))).toEqual({ reasons: ['challenge_mismatch', 'environment_mismatch'] });
    expect(authDataMutant((a) => (a[60] ^= 1))).toEqual({ reasons: ['challenge_mismatch', 'key_unknown'] });
    expect(authDataMutant((a) => (a[a.length - 1] ^= 1))).toEqual({ reasons: ['challenge_mismatch', 'key_unknown'] }); // y of the COSE key
  });

  it('a credCert re-made to carry a nonce that fits breaks the chain: counter_replayed for a counter of 1', () => {
    // The nonce extension is the only way to make a changed authData or another nonce fit; rewriting it voids
    // Apple's signature. The chain is checked only once every comparison passed, so a counter of 1 is named alone.
    const nonceAt = VP.cred.indexOf(Buffer.from('3024a1220420', 'hex')) + 6;
    const forged = (authData: Buffer, clientDataHash: Buffer) => {
      const cred = Buffer.from(VP.cred);
      createHash('sha256').update(Buffer.concat([authData, clientDataHash])).digest().copy(cred, nonceAt);
      return attest(V, { object: objectOf({ ...VP, cred, authData }), clientDataHash });
    };
    const counterOne = Buffer.from(VP.authData);
    counterOne.writeUInt32BE(1, 33);
    expect(forged(counterOne, b64(V.clientDataHash!))).toEqual({ reasons: ['counter_replayed'] });
    expect(forged(VP.authData, Buffer.alloc(32, 7))).toEqual({ reasons: ['chain_untrusted'] });
  });

  it('strict CBOR: a duplicate key, an indefinite length, a trailing byte, non-minimal integers are token_malformed', () => {
    const original = b64(V.attestation!);
    expect(original[0]).toBe(0xa3); // a map of three
    const dupFmt = Buffer.concat([Buffer.from([0xa4]), original.subarray(1), cbor('fmt'), cbor('apple-appattest')]);
    expect(withObject(dupFmt)).toEqual({ reasons: ['token_malformed'] });
    expect(withObject(Buffer.concat([Buffer.from([0xbf]), original.subarray(1), Buffer.from([0xff])]))).toEqual({ reasons: ['token_malformed'] });
    expect(withObject(Buffer.concat([original, Buffer.from([0x00])]))).toEqual({ reasons: ['token_malformed'] });
    expect(withObject(Buffer.concat([Buffer.from([0xb8, 0x03]), original.subarray(1)]))).toEqual({ reasons: ['token_malformed'] });
    // The COSE key's `1: 2` written `01 18 02`: a non-minimal integer inside authData.
    const keyAt = 37 + 16 + 2 + 32;
    expect(VP.authData.subarray(keyAt, keyAt + 3).toString('hex')).toBe('a50102');
    const authData = Buffer.concat([VP.authData.subarray(0, keyAt + 2), Buffer.from([0x18, 0x02]), VP.authData.subarray(keyAt + 3)]);
    expect(withObject(objectOf({ ...VP, authData }))).toEqual({ reasons: ['token_malformed'] });
  });

  it('shapes other than Apple\'s are token_malformed: fmt, key sets, a chain of one or three, authData layout', () => {
    expect(withObject(objectOf(VP, undefined, 'packed'))).toEqual({ reasons: ['token_malformed'] });
    // A chain cut to the credCert is not what the device sends (always credCert and intermediate): it is refused
    // as a shape, before any signature is checked, like any other wrong x5c length.
    expect(withObject(objectOf(VP, [VP.cred]))).toEqual({ reasons: ['token_malformed'] });
    expect(withObject(objectOf(VP, [VP.cred, VP.intermediate, ROOTS[0].raw]))).toEqual({ reasons: ['token_malformed'] });
    const extraKey = cbor(new Map<Item, Item>([['fmt', 'apple-appattest'], ['attStmt', new Map<Item, Item>([['x5c', [VP.cred, VP.intermediate]], ['receipt', VP.receipt], ['alg', -7]])], ['authData', VP.authData]]));
    expect(withObject(extraKey)).toEqual({ reasons: ['token_malformed'] });
    expect(withObject(objectOf({ ...VP, authData: VP.authData.subarray(0, 100) }))).toEqual({ reasons: ['token_malformed'] });
    expect(withObject(objectOf({ ...VP, authData: Buffer.concat([VP.authData, Buffer.from([0])]) }))).toEqual({ reasons: ['token_malformed'] });
    const noAt = Buffer.from(VP.authData);
    noAt[32] = 0x00;
    expect(withObject(objectOf({ ...VP, authData: noAt }))).toEqual({ reasons: ['token_malformed'] });
  });

  it('a certificate that is not canonical DER is token_malformed', () => {
    expect(VP.cred.subarray(0, 2).toString('hex')).toBe('3082'); // a two-byte length, written here with three
    const cred = Buffer.concat([Buffer.from([0x30, 0x83, 0x00]), VP.cred.subarray(2)]);
    expect(withObject(objectOf({ ...VP, cred }))).toEqual({ reasons: ['token_malformed'] });
  });

  it('the intermediate swapped for another certificate, or a broken credCert signature, is chain_untrusted', () => {
    expect(withObject(objectOf(VP, [VP.cred, ROOTS[0].raw]))).toEqual({ reasons: ['chain_untrusted'] });
    expect(withObject(objectOf(VP, [VP.cred, partsOf(OTHER).cred]))).toEqual({ reasons: ['chain_untrusted'] });
    expect(withObject(objectOf(VP, [VP.cred, VP.cred]))).toEqual({ reasons: ['chain_untrusted'] });
    expect(withObject(objectOf({ ...VP, cred: flip(VP.cred, VP.cred.length - 5) }))).toEqual({ reasons: ['chain_untrusted'] });
  });

  it("another device's credCert does not attest this authData or this key", () => {
    expect(withObject(objectOf({ ...VP, cred: partsOf(OTHER).cred }))).toEqual({ reasons: ['challenge_mismatch', 'key_unknown'] });
  });
});

describe('real assertions', () => {
  const keyOf = (f: Fixture): AppAttestKey => ({ keyId: f.keyId, publicKeySpki: spkiOf(f.assertion!.publicKeyPem) });
  const assert_ = (f: Fixture, change: Partial<Parameters<typeof verifyAppAssertion>[0]> = {}) =>
    verifyAppAssertion({ assertion: b64(f.assertion!.assertion), clientDataHash: b64(f.assertion!.clientDataHash), app: appOf(f), key: keyOf(f), ...change });

  it.each(ASSERTIONS.map((f) => [f.file, f]))('%s verifies with its public key and reads the source counter', (_n, f) => {
    expect(assert_(f)).toEqual({ reasons: [], counter: f.assertion!.expectedCounter });
  });

  it.each(ASSERTIONS.filter((f) => f.attestation).map((f) => [f.file, f]))('%s verifies with the key its attestation registered', (_n, f) => {
    const { key } = attest(f);
    expect(assert_(f, { key: key! })).toEqual({ reasons: [], counter: f.assertion!.expectedCounter });
  });

  it.each(ASSERTIONS.map((f) => [f.file, f]))('%s: a flipped signature byte, another nonce or another key is signature_invalid', (_n, f) => {
    const raw = b64(f.assertion!.assertion);
    const sigAt = raw.indexOf(Buffer.from('signature')) + 'signature'.length + 2; // after the byte string's head (58 len)
    expect(raw[sigAt]).toBe(0x30);
    expect(assert_(f, { assertion: flip(raw, sigAt + 10) })).toEqual({ reasons: ['signature_invalid'] });
    expect(assert_(f, { clientDataHash: flip(b64(f.assertion!.clientDataHash), 0) })).toEqual({ reasons: ['signature_invalid'] });
    const other = ASSERTIONS.find((o) => o.keyId !== f.keyId)!;
    expect(assert_(f, { key: keyOf(other) })).toEqual({ reasons: ['signature_invalid'] });
  });

  it.each(ASSERTIONS.map((f) => [f.file, f]))('%s for another app is team_mismatch', (_n, f) => {
    expect(assert_(f, { app: { ...appOf(f), teamId: 'AAAAAAAAAA' } })).toEqual({ reasons: ['team_mismatch'] });
    expect(assert_(f, { app: { ...appOf(f), bundleId: 'com.example.other' } })).toEqual({ reasons: ['team_mismatch'] });
  });

  it('refuses shapes other than { signature, authenticatorData } as token_malformed', () => {
    const f = V;
    const raw = b64(f.assertion!.assertion);
    const parsed = decodeStrictCbor(raw) as Map<string, Buffer>;
    const signature = parsed.get('signature')!;
    const authenticatorData = parsed.get('authenticatorData')!;
    const rebuilt = cbor(new Map<Item, Item>([['signature', signature], ['authenticatorData', authenticatorData]]));
    expect(rebuilt.equals(raw)).toBe(true);
    const malformed = [
      Buffer.concat([raw, Buffer.from([0x00])]),
      cbor(new Map<Item, Item>([['signature', signature], ['authenticatorData', authenticatorData.subarray(0, 36)]])),
      cbor(new Map<Item, Item>([['signature', signature], ['authenticatorData', Buffer.concat([authenticatorData, Buffer.from([0])])]])),
      cbor(new Map<Item, Item>([['signature', signature], ['authenticatorData', authenticatorData], ['x', 1]])),
      cbor(new Map<Item, Item>([['signature', signature.subarray(1)], ['authenticatorData', authenticatorData]])), // not DER
      cbor(new Map<Item, Item>([['signature', Buffer.concat([signature, Buffer.from([0])])], ['authenticatorData', authenticatorData]])),
      cbor(new Map<Item, Item>([['sig', signature], ['authenticatorData', authenticatorData]])),
      cbor([signature, authenticatorData]),
      Buffer.alloc(0),
    ];
    for (const assertion of malformed) expect(assert_(f, { assertion })).toEqual({ reasons: ['token_malformed'] });
  });

  it('a stored key that is no P-256 public key is key_unknown', () => {
    const p384 = ROOTS[0].publicKey.export({ type: 'spki', format: 'der' });
    expect(assert_(V, { key: { keyId: V.keyId, publicKeySpki: p384 } })).toEqual({ reasons: ['key_unknown'] });
    expect(assert_(V, { key: { keyId: V.keyId, publicKeySpki: Buffer.from('not a key') } })).toEqual({ reasons: ['key_unknown'] });
  });
});

describe('built-in root', () => {
  it('is the Apple App Attestation Root CA of the fixtures, with its own validity window', () => {
    const [root] = APPLE_APP_ATTEST_ROOTS;
    const cert = new X509Certificate(root.pem);
    expect(cert.raw.equals(ROOTS[0].raw)).toBe(true);
    expect(cert.fingerprint256.replace(/:/g, '')).toBe('1CB9823BA28BA6AD2D33A006941DE2AE4F513EF1D4E831B9F7E0FA7B6242C932');
    expect([root.notBefore, root.notAfter]).toEqual([cert.validFromDate, cert.validToDate]);
    expect(attest(V, { roots: [cert] })).toEqual({ reasons: [], key: expect.anything() });
  });
});

describe('fuzzing', () => {
  it('never throws on 2,000 seeded mutations of the real attestations and assertions, and answers known reasons', () => {
    const seeds = appAttestSeeds();
    expect(seeds).toHaveLength(17);
    const known = new Set<string>(ATTEST_REASONS);
    const app = appOf(V);
    for (const m of fc.sample(mutation, { seed: 35, numRuns: 2000 })) {
      const input = applyMutation(seeds, m);
      expect(() => fuzzAppAttest(input)).not.toThrow();
      const { reasons } = verifyAppAttestation({ object: input, clientDataHash: b64(V.clientDataHash!), app, roots: ROOTS, now: new Date(V.verifyAt!) });
      expect(reasons.every((r) => known.has(r))).toBe(true);
    }
  });
});
