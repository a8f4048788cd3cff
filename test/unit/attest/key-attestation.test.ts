// Protects: the Android Key Attestation engine (src/attest/key-attestation/). Every real chain gives at its verifyAt
// what its meta.json says (security level, device state, chain trusted or not) and is refused today as expired; each
// mutation a device or a forger could send is refused with its own reason; the structure is strict DER or
// `token_malformed`; and no input makes the engine throw.
import { X509Certificate } from 'node:crypto';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { children, readWhole, certificateParts, DER } from '../../../src/attest/der';
import { verifyKeyAttestation, parseRevocationList, type KeyAttestationInput, type TrustRoot } from '../../../src/attest/key-attestation';
import { loadPemCertificates } from '../../../src/attest/roots/pem';
import { GOOGLE_ATTESTATION_ROOTS } from '../../../src/attest/roots/google';
import { ANDROID_KEY_DIR, androidKeyChain, androidKeyChains, googleRootsPem, type AndroidKeyChain } from '../../fixtures/android-key-corpus';
import { fuzzKeyAttestation, keyAttestationSeeds } from '../../fuzz/key-attestation-target';
import { applyMutation, mutation } from '../../fuzz/mutate';
import { applicationId, derInteger, syntheticChain, tlv, type LeafSpec } from './synthetic-key-attestation';

/** "Today" for the tests: every fixture chain has expired by then (Root 1 on 2026-05-24, the others earlier). */
const TODAY = new Date('2026-11-29T12:00:00Z');
const DAY = 24 * 3600 * 1000;

/** The fixture's Google roots, each anchoring within its certificate's own dates (as a PEM file's roots do). */
const ROOTS: TrustRoot[] = loadPemCertificates(googleRootsPem()).map((cert) => ({ cert, notBefore: cert.validFromDate, notAfter: cert.validToDate }));
const NO_REVOCATION = parseRevocationList('{"entries":{}}');

const CHAINS = androidKeyChains().filter((c) => c.meta.verifyAt !== null);
const VALID = CHAINS.filter((c) => c.meta.expected.verdict === 'valid');
const INVALID = CHAINS.filter((c) => c.meta.expected.verdict === 'invalid');

/** The engine's inputs for a chain, from its own data: challenge, the last package it names, its first signer digest. */
function inputsOf(c: AndroidKeyChain, over: Partial<KeyAttestationInput> = {}): KeyAttestationInput {
  const app = c.meta.attestationApplicationId!;
  return {
    chain: c.chain,
    challenge: Buffer.from(c.meta.challenge!.hex ?? c.meta.challenge!.clientDataHashHex!, 'hex'),
    packageName: app.packageInfos[app.packageInfos.length - 1].packageName,
    recordedSigners: [app.signatureDigestsSha256Hex[0]],
    roots: ROOTS,
    revocation: NO_REVOCATION,
    now: new Date(c.meta.verifyAt!),
    ...over,
  };
}

/** What the device state in meta.json's rootOfTrust must give. */
function deviceReasons(c: AndroidKeyChain): string[] {
  const rot = c.meta.rootOfTrust!;
  return [...(rot.deviceLocked ? [] : ['device_unlocked']), ...(rot.verifiedBootState === 'Verified' ? [] : ['boot_unverified'])];
}

const reasonsOf = (input: KeyAttestationInput): string[] => verifyKeyAttestation(input).reasons;

describe('real chains, as their meta.json describes them', () => {
  it('has the chains it should: six valid, three invalid', () => {
    expect(VALID.map((c) => c.name)).toHaveLength(6);
    expect(INVALID.map((c) => c.name)).toHaveLength(3);
  });

  it.each(VALID.map((c) => [c.name, c] as const))('%s verifies at its verifyAt, with the device state and security level it records', (_, c) => {
    const app = c.meta.attestationApplicationId!;
    const result = verifyKeyAttestation(inputsOf(c));
    expect(result.reasons).toEqual(deviceReasons(c));
    expect(result.securityLevel).toBe(c.meta.expected.securityLevel);
    // A build is named only by a device locked with a verified boot: on any other, Android's statement of the app is
    // written by a system nobody vouches for.
    const vouched = deviceReasons(c).length === 0;
    expect(result.versionCode).toBe(vouched ? app.packageInfos[app.packageInfos.length - 1].version : undefined);
    // Google's built-in roots anchor it the same way.
    const builtIn = GOOGLE_ATTESTATION_ROOTS.map((r) => ({ cert: new X509Certificate(r.pem), notBefore: r.notBefore, notAfter: r.notAfter }));
    expect(reasonsOf(inputsOf(c, { roots: builtIn }))).toEqual(deviceReasons(c));
  });

  it.each(VALID.map((c) => [c.name, c] as const))('%s is refused today, and one day after its validity window, as expired', (_, c) => {
    expect(reasonsOf(inputsOf(c, { now: TODAY }))).toEqual(['certificate_expired', ...deviceReasons(c)]);
    const after = new Date(new Date(c.meta.validWindow!.to).getTime() + DAY);
    expect(reasonsOf(inputsOf(c, { now: after }))).toEqual(['certificate_expired', ...deviceReasons(c)]);
  });

  it.each(INVALID.map((c) => [c.name, c] as const))('%s is untrusted at its verifyAt, with the device state and security level it records', (_, c) => {
    const result = verifyKeyAttestation(inputsOf(c));
    expect(result.reasons).toEqual(['chain_untrusted', ...deviceReasons(c)]);
    expect(result.securityLevel).toBe(c.meta.expected.securityLevel);
  });

  it('the StrongBox chains with a foreign root are untrusted whatever the date', () => {
    for (const name of ['google-ec-strongbox-foreign-root', 'google-rsa-strongbox-foreign-root']) {
      const c = androidKeyChain(name);
      expect(verifyKeyAttestation(inputsOf(c))).toMatchObject({ reasons: expect.arrayContaining(['chain_untrusted']), securityLevel: 'StrongBox' });
      expect(reasonsOf(inputsOf(c, { now: TODAY }))).toContain('chain_untrusted');
    }
  });

  it('no chain is on the fixture status list, whose suspended test entry is found', () => {
    const status = parseRevocationList(readFileSync(path.join(ANDROID_KEY_DIR, 'status.json'), 'utf8'));
    for (const c of VALID) expect(reasonsOf(inputsOf(c, { revocation: status }))).toEqual(deviceReasons(c));
    // The suspended certificate is a TEE intermediate: put it above a real leaf and the list refuses it (with the chain).
    const suspended = androidKeyChain('google-status-suspended-cert').certs[0];
    const c = androidKeyChain('google-ec-tee');
    const reasons = reasonsOf(inputsOf(c, { chain: Buffer.concat([c.certs[0], suspended, ...c.certs.slice(2)]), revocation: status }));
    expect(reasons).toEqual(expect.arrayContaining(['chain_untrusted', 'certificate_revoked']));
  });

  it('a chain whose root expired does not re-anchor on a later root with the same key when the root is left out', () => {
    const c = androidKeyChain('google-ec-tee');
    expect(reasonsOf(inputsOf(c, { chain: Buffer.concat(c.certs.slice(0, -1)), now: TODAY }))).toContain('chain_untrusted');
    expect(reasonsOf(inputsOf(c, { chain: Buffer.concat(c.certs.slice(0, -1)) }))).toContain('chain_untrusted');
  });
});

describe('mutations of a trusted chain (google-rkp-pixel7pro-2023)', () => {
  const c = androidKeyChain('google-rkp-pixel7pro-2023');
  const other = androidKeyChain('google-rkp-pixel7pro-attest-key-2023');
  const pixel8a = androidKeyChain('simplewebauthn-pixel8a-2025');
  const base = inputsOf(c);
  const withCerts = (certs: Buffer[]): KeyAttestationInput => ({ ...base, chain: Buffer.concat(certs) });

  it('as it is: trusted, version code and security level read from the leaf', () => {
    expect(verifyKeyAttestation(base)).toEqual({ reasons: [], versionCode: 1, securityLevel: 'TrustedEnvironment' });
  });

  it('one byte of the challenge, or its length, changed: challenge_mismatch', () => {
    const challenge = Buffer.from(base.challenge);
    challenge[challenge.length - 1] ^= 1;
    expect(reasonsOf({ ...base, challenge })).toEqual(['challenge_mismatch']);
    expect(reasonsOf({ ...base, challenge: base.challenge.subarray(1) })).toEqual(['challenge_mismatch']);
    expect(reasonsOf({ ...base, challenge: Buffer.concat([base.challenge, Buffer.from([0])]) })).toEqual(['challenge_mismatch']);
  });

  it('another package: package_mismatch, and no version code', () => {
    const result = verifyKeyAttestation({ ...base, packageName: `${base.packageName}.clone` });
    expect(result.reasons).toEqual(['package_mismatch']);
    expect(result.versionCode).toBeUndefined();
    expect(reasonsOf({ ...base, packageName: base.packageName.toUpperCase() })).toEqual(['package_mismatch']);
  });

  it('another recorded signer: signer_mismatch; none recorded: signer_unrecorded; one of several: trusted', () => {
    const signer = base.recordedSigners![0];
    const another = signer.replace(/^./, (ch) => (ch === '0' ? '1' : '0'));
    expect(reasonsOf({ ...base, recordedSigners: [another] })).toEqual(['signer_mismatch']);
    expect(reasonsOf({ ...base, recordedSigners: null })).toEqual(['signer_unrecorded']);
    expect(reasonsOf({ ...base, recordedSigners: [] })).toEqual(['signer_unrecorded']);
    expect(reasonsOf({ ...base, recordedSigners: [another, signer] })).toEqual([]);
    expect(reasonsOf({ ...base, recordedSigners: [signer.toUpperCase()] })).toEqual([]);
  });

  it('a certificate swapped for one of another chain: chain_untrusted', () => {
    expect(reasonsOf(withCerts([other.certs[0], ...c.certs.slice(1)]))).toEqual(['chain_untrusted']);
    expect(reasonsOf(withCerts([c.certs[0], pixel8a.certs[1], ...c.certs.slice(2)]))).toContain('chain_untrusted');
    expect(reasonsOf(withCerts([...c.certs.slice(0, 2), pixel8a.certs[2], ...c.certs.slice(3)]))).toContain('chain_untrusted');
  });

  it('the chain cut: root removed, an intermediate removed, the leaf alone: chain_untrusted', () => {
    expect(reasonsOf(withCerts(c.certs.slice(0, -1)))).toEqual(['chain_untrusted']);
    expect(reasonsOf(withCerts([c.certs[0], c.certs[1], c.certs[3], c.certs[4]]))).toEqual(['chain_untrusted']);
    expect(reasonsOf(withCerts([c.certs[0], c.certs[2], c.certs[3], c.certs[4]]))).toEqual(['chain_untrusted']);
    expect(reasonsOf(withCerts(c.certs.slice(0, 1)))).toEqual(['chain_untrusted']);
  });

  it('no Google root configured, or only a foreign one: chain_untrusted', () => {
    const foreign = androidKeyChain('google-rsa-strongbox-foreign-root').certs[3];
    const cert = new X509Certificate(foreign);
    expect(reasonsOf({ ...base, roots: [{ cert, notBefore: cert.validFromDate, notAfter: cert.validToDate }] })).toEqual(['chain_untrusted']);
    expect(reasonsOf({ ...base, roots: [] })).toEqual(['chain_untrusted']);
  });

  it('each certificate of the chain on the revocation list, REVOKED or SUSPENDED, hex or decimal: certificate_revoked', () => {
    const serials = c.certs.map((der) => certificateParts(der).serialHex.replace(/^0+(?=.)/, ''));
    for (const serial of serials) {
      for (const status of ['REVOKED', 'SUSPENDED']) {
        const revocation = parseRevocationList(JSON.stringify({ entries: { [serial]: { status } } }));
        expect(reasonsOf({ ...base, revocation })).toEqual(['certificate_revoked']);
      }
    }
    // The root's 64-bit serial as Google writes old serials: in decimal.
    const decimal = BigInt(`0x${serials[serials.length - 1]}`).toString(10);
    const revocation = parseRevocationList(JSON.stringify({ entries: { [decimal]: { status: 'REVOKED', reason: 'KEY_COMPROMISE' } } }));
    expect(reasonsOf({ ...base, revocation })).toEqual(['certificate_revoked']);
  });

  it('the root not valid when it issued the certificate below it, or not valid now: certificate_expired', () => {
    const rootCert = new X509Certificate(c.certs[c.certs.length - 1]);
    const below = new X509Certificate(c.certs[c.certs.length - 2]).validFromDate;
    const late: TrustRoot = { cert: rootCert, notBefore: new Date(below.getTime() + DAY), notAfter: rootCert.validToDate };
    expect(reasonsOf({ ...base, roots: [late] })).toEqual(['certificate_expired']);
    const ended: TrustRoot = { cert: rootCert, notBefore: rootCert.validFromDate, notAfter: new Date(base.now.getTime() - DAY) };
    expect(reasonsOf({ ...base, roots: [ended] })).toEqual(['certificate_expired']);
  });

  it('a non-minimal length, in the token or deep in a certificate: token_malformed', () => {
    const leaf = c.certs[0];
    expect(leaf.subarray(0, 2)).toEqual(Buffer.from([0x30, 0x82]));
    const outer = Buffer.concat([Buffer.from([0x30, 0x83, 0x00]), leaf.subarray(2)]);
    expect(reasonsOf(withCerts([outer, ...c.certs.slice(1)]))).toEqual(['token_malformed']);
    // The signatureAlgorithm SEQUENCE (outside what the signature covers) with a long-form length.
    const [tbs, alg, sig] = children(leaf, readWhole(leaf, DER.SEQUENCE));
    const longAlg = Buffer.concat([Buffer.from([0x30, 0x81, alg.end - alg.body]), leaf.subarray(alg.body, alg.end)]);
    const inner = tlv(0x30, leaf.subarray(tbs.start, tbs.end), longAlg, leaf.subarray(sig.start, sig.end));
    expect(reasonsOf(withCerts([inner, ...c.certs.slice(1)]))).toEqual(['token_malformed']);
  });

  it('a byte added, removed or cut off: token_malformed', () => {
    expect(reasonsOf({ ...base, chain: Buffer.concat([base.chain, Buffer.from([0x30])]) })).toEqual(['token_malformed']);
    expect(reasonsOf({ ...base, chain: Buffer.concat([base.chain, Buffer.from([0])]) })).toEqual(['token_malformed']);
    expect(reasonsOf({ ...base, chain: Buffer.concat([Buffer.from([0]), base.chain]) })).toEqual(['token_malformed']);
    expect(reasonsOf({ ...base, chain: base.chain.subarray(0, -1) })).toEqual(['token_malformed']);
    expect(reasonsOf({ ...base, chain: Buffer.alloc(0) })).toEqual(['token_malformed']);
  });

  it('a KeyDescription that is BER, not DER, or names a tag no KeyMint version defines: token_malformed', () => {
    const leaf = c.certs[0];
    const kdAt = leaf.indexOf(Buffer.from('060a2b06010401d679020111', 'hex'));
    // rootOfTrust's deviceLocked TRUE written 0x01 (BER's "any non-zero"), not DER's 0xff.
    const locked = leaf.indexOf(Buffer.from('0101ff0a0100', 'hex'), kdAt);
    expect(locked).toBeGreaterThan(kdAt);
    const ber = Buffer.from(leaf);
    ber[locked + 2] = 0x01;
    expect(reasonsOf(withCerts([ber, ...c.certs.slice(1)]))).toEqual(['token_malformed']);
    // osPatchLevel [706] (bf 85 42) turned into [767], a tag no schema has.
    const patch = leaf.indexOf(Buffer.from('bf8542', 'hex'), kdAt);
    expect(patch).toBeGreaterThan(kdAt);
    const unknown = Buffer.from(leaf);
    unknown[patch + 2] = 0x7f;
    expect(reasonsOf(withCerts([unknown, ...c.certs.slice(1)]))).toEqual(['token_malformed']);
  });

  it('no KeyDescription in the first certificate, or more certificates than a chain has: token_malformed', () => {
    expect(reasonsOf(withCerts(c.certs.slice(1)))).toEqual(['token_malformed']);
    expect(reasonsOf(withCerts([...c.certs, ...c.certs, c.certs[4]]))).toEqual(['token_malformed']);
  });

  it('several failures are reported together, in check order, once each', () => {
    const result = verifyKeyAttestation({
      ...base,
      chain: Buffer.concat(c.certs.slice(0, -1)),
      now: TODAY,
      packageName: 'com.example.other',
      recordedSigners: ['00'.repeat(32)],
      revocation: parseRevocationList(JSON.stringify({ entries: { [certificateParts(c.certs[1]).serialHex]: { status: 'REVOKED' } } })),
    });
    expect(result.reasons).toEqual(['chain_untrusted', 'certificate_expired', 'certificate_revoked', 'package_mismatch', 'signer_mismatch']);
  });

  it('a chain made for another challenge is challenge_mismatch alone, whatever else is wrong with it', () => {
    const result = verifyKeyAttestation({
      ...base,
      chain: Buffer.concat(c.certs.slice(0, -1)),
      now: TODAY,
      challenge: Buffer.from('another'),
      packageName: 'com.example.other',
      recordedSigners: ['00'.repeat(32)],
      revocation: parseRevocationList(JSON.stringify({ entries: { [certificateParts(c.certs[1]).serialHex]: { status: 'REVOKED' } } })),
    });
    expect(result).toEqual({ reasons: ['challenge_mismatch'] });
  });
});

describe('ATTEST_KEY chains', () => {
  it('a leaf attested by ATTEST_KEYs is trusted; the fake leaf is not, although every signature verifies', () => {
    expect(reasonsOf(inputsOf(androidKeyChain('google-rkp-pixel7pro-attest-key-2023')))).toEqual([]);
    const fake = androidKeyChain('google-rkp-pixel7pro-fake-leaf-2023');
    for (let i = 0; i + 1 < fake.certs.length; i++) expect(new X509Certificate(fake.certs[i]).verify(new X509Certificate(fake.certs[i + 1]).publicKey)).toBe(true);
    expect(reasonsOf(inputsOf(fake))).toEqual(['chain_untrusted']);
  });

  it('an attest key cut out of the chain: chain_untrusted', () => {
    const c = androidKeyChain('google-rkp-pixel7pro-attest-key-2023');
    expect(reasonsOf(inputsOf(c, { chain: Buffer.concat([c.certs[0], ...c.certs.slice(2)]) }))).toEqual(['chain_untrusted']);
    expect(reasonsOf(inputsOf(c, { chain: Buffer.concat([c.certs[0], c.certs[1], ...c.certs.slice(3)]) }))).toEqual(['chain_untrusted']);
  });
});

describe('made chains: what no real chain shows', () => {
  const CHALLENGE = Buffer.from('a nonce of this service');
  const SIGNER = 'ab'.repeat(32);
  const good: LeafSpec = {
    challenge: CHALLENGE,
    level: 1,
    rootOfTrust: { locked: true, bootState: 0 },
    origin: 0,
    appId: applicationId([{ name: 'com.example.app', version: 42n }], [SIGNER]),
  };
  const run = (spec: Partial<LeafSpec>) => {
    const { chain, root } = syntheticChain({ ...good, ...spec });
    return verifyKeyAttestation({ chain, challenge: CHALLENGE, packageName: 'com.example.app', recordedSigners: [SIGNER], roots: [root], revocation: NO_REVOCATION, now: TODAY });
  };

  it('a hardware key on a locked, verified device, today: trusted', () => {
    expect(run({})).toEqual({ reasons: [], versionCode: 42, securityLevel: 'TrustedEnvironment' });
    expect(run({ level: 2 })).toEqual({ reasons: [], versionCode: 42, securityLevel: 'StrongBox' });
  });

  it('a software keystore, mismatched levels, no root of trust, an imported key: software_keystore', () => {
    expect(run({ level: 0 })).toEqual({ reasons: ['software_keystore'], versionCode: 42 });
    expect(run({ level: 1, keymasterLevel: 0 }).reasons).toEqual(['software_keystore']);
    expect(run({ level: 2, keymasterLevel: 1 }).reasons).toEqual(['software_keystore']);
    expect(run({ rootOfTrust: null }).reasons).toEqual(['software_keystore']);
    expect(run({ origin: 2 }).reasons).toEqual(['software_keystore']); // KeyOrigin IMPORTED
    expect(run({ origin: null }).reasons).toEqual(['software_keystore']);
  });

  it('an unlocked bootloader, a boot state other than Verified: device_unlocked, boot_unverified', () => {
    expect(run({ rootOfTrust: { locked: false, bootState: 0 } }).reasons).toEqual(['device_unlocked']);
    for (const bootState of [1, 2, 3]) expect(run({ rootOfTrust: { locked: true, bootState } }).reasons).toEqual(['boot_unverified']);
    expect(run({ rootOfTrust: { locked: false, bootState: 2 } }).reasons).toEqual(['device_unlocked', 'boot_unverified']);
  });

  it('no attestationApplicationId: package_mismatch and signer_mismatch', () => {
    expect(run({ appId: null })).toEqual({ reasons: ['package_mismatch', 'signer_mismatch'], securityLevel: 'TrustedEnvironment' });
  });

  it('a version code past 2^53 is not reported rather than rounded', () => {
    const big = applicationId([{ name: 'com.example.app', version: 2n ** 53n + 1n }], [SIGNER]);
    expect(run({ appId: big })).toEqual({ reasons: [], securityLevel: 'TrustedEnvironment' });
    const longCode = applicationId([{ name: 'com.example.app', version: 0x1_0000_0007n }], [SIGNER]); // versionCodeMajor 1
    expect(run({ appId: longCode }).versionCode).toBe(0x1_0000_0007);
  });

  it('a tag named twice, or an attestationApplicationId that is not DER: token_malformed', () => {
    expect(run({ rootOfTrustTwice: true }).reasons).toEqual(['token_malformed']);
    const nonMinimal = applicationId([{ name: 'com.example.app', version: 42n }], [SIGNER]);
    const at = nonMinimal.indexOf(derInteger(42n));
    const bad = Buffer.concat([nonMinimal.subarray(0, at), Buffer.from([0x02, 0x02, 0x00, 42]), nonMinimal.subarray(at + 3)]);
    // lengths of the enclosing SEQUENCE and SET grow by one
    bad[1] += 1;
    bad[3] += 1;
    bad[5] += 1;
    expect(run({ appId: bad }).reasons).toEqual(['token_malformed']);
    expect(run({ appId: Buffer.concat([nonMinimal, Buffer.from([0])]) }).reasons).toEqual(['token_malformed']);
  });
});

describe('the built-in Google roots', () => {
  it("are the five roots of Google's page, byte for byte, each with its own dates as its window", () => {
    const fixture = loadPemCertificates(googleRootsPem());
    const listed = JSON.parse(readFileSync(path.join(ANDROID_KEY_DIR, 'roots.json'), 'utf8')).google.roots as { notBefore: string; notAfter: string }[];
    expect(GOOGLE_ATTESTATION_ROOTS).toHaveLength(5);
    GOOGLE_ATTESTATION_ROOTS.forEach((root, i) => {
      const cert = new X509Certificate(root.pem);
      expect(cert.raw.equals(fixture[i].raw)).toBe(true);
      expect([root.notBefore, root.notAfter]).toEqual([cert.validFromDate, cert.validToDate]);
      expect([root.notBefore, root.notAfter]).toEqual([new Date(listed[i].notBefore), new Date(listed[i].notAfter)]);
    });
    // Root 1 expired in 2026: chains ending in it are refused from then on.
    expect(GOOGLE_ATTESTATION_ROOTS.filter((r) => r.notAfter < TODAY).map((r) => r.notAfter.toISOString())).toEqual(['2026-05-24T16:28:52.000Z']);
  });
});

describe('hostile input', () => {
  it('2,000 seeded mutations of the real chains: the engine answers every one and never throws', () => {
    const seeds = keyAttestationSeeds();
    for (const seed of seeds) expect(() => fuzzKeyAttestation(seed)).not.toThrow();
    const inputs = fc.sample(mutation, { numRuns: 2000, seed: 35 }).map((m) => applyMutation(seeds, m));
    for (const input of inputs) fuzzKeyAttestation(input);
  });

  it('inputs that are not even bytes of a chain', () => {
    for (const chain of [Buffer.alloc(0), Buffer.from([0x30]), Buffer.from([0x30, 0x80, 0, 0]), Buffer.alloc(64 * 1024, 0x30)]) {
      expect(reasonsOf({ ...inputsOf(androidKeyChain('google-rkp-pixel7pro-2023')), chain })).toEqual(['token_malformed']);
    }
    // A caller's mistake (no Buffer at all) is an answer too, never an exception.
    expect(verifyKeyAttestation({ ...inputsOf(androidKeyChain('google-rkp-pixel7pro-2023')), chain: undefined as unknown as Buffer }).reasons).toEqual(['token_malformed']);
  });
});
