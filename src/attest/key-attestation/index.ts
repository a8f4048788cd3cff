import type { AttestReason } from '../reasons';
import { anchorOf, datesHold, linksHold, readChain, readLeaf, type ChainCertificate, type TrustRoot } from './chain';
import {
  attestationChallengeOf,
  hardwareProperty,
  octets,
  readApplicationId,
  readKeyDescription,
  rootOfTrustKey,
  type ApplicationId,
  type KeyDescription,
} from './key-description';
import { revocationStatus, type RevocationList } from './revocation';

/**
 * The Android Key Attestation engine: pure, no I/O, never throws. The steps are Android's
 * (https://developer.android.com/privacy-and-security/security-key-attestation and
 * https://source.android.com/docs/security/features/keystore/attestation), with the choices this service makes:
 * - A token that does not read as strict DER certificates with a KeyDescription in the leaf is `token_malformed`, alone.
 *   So is a KeyDescription with a tag @peculiar/asn1-android does not know, as Google's verifier refuses unknown tags:
 *   a KeyMint version newer than the library's needs a library update.
 * - A leaf whose attestationChallenge is not the one this service issued is `challenge_mismatch`, alone, before any
 *   signature is checked: a chain made for another challenge (replayed, or forged to be expensive) says nothing about
 *   this request, and so costs a parse, not the chain's cryptography. App Attest stops at its nonce the same way.
 * - Otherwise every check runs and each failing one adds its reason, in the order below, once.
 * - The chain must end in a configured root, sent by the device, byte for byte (chain.ts, anchorOf).
 */
export type { TrustRoot } from './chain';
export { parseRevocationList, type RevocationList } from './revocation';

export interface KeyAttestationInput {
  /** The DER certificates concatenated, leaf first (already strict-base64url-decoded by the caller). */
  chain: Buffer;
  /** The expected attestationChallenge: the nonce's UTF-8 bytes. */
  challenge: Buffer;
  /** The app's configured package. */
  packageName: string;
  /** Lowercase hex SHA-256 of the package's recorded signer(s); null when none is recorded. */
  recordedSigners: readonly string[] | null;
  roots: readonly TrustRoot[];
  revocation: RevocationList;
  now: Date;
}

export interface KeyAttestationResult {
  reasons: AttestReason[];
  /**
   * The configured package's version (versionCode) as the attestationApplicationId states it, to find its build;
   * absent when the device is unlocked or its boot unverified (the system that states it is not vouched for).
   */
  versionCode?: number;
  securityLevel?: 'TrustedEnvironment' | 'StrongBox';
}

/** SecurityLevel (KeyDescription schema): 0 Software, 1 TrustedEnvironment, 2 StrongBox. */
const SECURITY_LEVELS: Record<number, KeyAttestationResult['securityLevel']> = { 1: 'TrustedEnvironment', 2: 'StrongBox' };
/** KeyOrigin GENERATED: made inside the keystore, never imported. */
const ORIGIN_GENERATED = 0;
/** VerifiedBootState Verified: the boot chain was checked against the manufacturer's key. */
const BOOT_VERIFIED = 0;

export function verifyKeyAttestation(input: KeyAttestationInput): KeyAttestationResult {
  try {
    // The challenge first, from the leaf alone: a chain made for another one costs a DER walk of one certificate, not
    // the whole chain's X509 and KeyDescription parsing (check() compares it again once everything has read).
    const leaf = readLeaf(input.chain);
    const challenge = leaf && attestationChallengeOf(leaf);
    if (challenge && !challenge.equals(input.challenge)) return { reasons: ['challenge_mismatch'] };
    const token = readToken(input.chain);
    return token ? check(input, token) : { reasons: ['token_malformed'] };
  } catch {
    // Nothing below is meant to throw once the token has read; if it does, the token is what nobody expected.
    return { reasons: ['token_malformed'] };
  }
}

interface Token {
  certs: ChainCertificate[];
  descriptions: (KeyDescription | null)[];
  leaf: KeyDescription;
  /** The attestationApplicationId, or null when the leaf states none. */
  appId: ApplicationId | null;
}

/** The structure: certificates, KeyDescriptions, the application id. Null when any of it does not read. */
function readToken(chain: Buffer): Token | null {
  try {
    const certs = readChain(chain);
    const descriptions = certs.map((c) => readKeyDescription(c.parts));
    const leaf = descriptions[0];
    if (!leaf) return null; // not a key attestation at all
    // Android's keystore writes it in softwareEnforced (the framework, not the TEE, knows the calling app).
    const appIdOctets = leaf.software.findProperty('attestationApplicationId') ?? hardwareProperty(leaf, 'attestationApplicationId');
    const appId = appIdOctets ? readApplicationId(octets(appIdOctets)) : null;
    return { certs, descriptions, leaf, appId };
  } catch {
    return null;
  }
}

function check(input: KeyAttestationInput, { certs, descriptions, leaf, appId }: Token): KeyAttestationResult {
  const reasons: AttestReason[] = [];
  const kd = leaf.parsed;
  // 0. The challenge this service issued, before any cryptography (see above).
  if (!octets(kd.attestationChallenge).equals(input.challenge)) return { reasons: ['challenge_mismatch'] };

  // 1. The chain: links, the ATTEST_KEY rule, the leaf's story shared by the attest keys above it, a configured root.
  const level = kd.attestationSecurityLevel;
  const rot = hardwareProperty(leaf, 'rootOfTrust');
  const attestKeysAgree = descriptions.every(
    (d, i) => i === 0 || !d || (d.parsed.attestationSecurityLevel === level && rootOfTrustKey(hardwareProperty(d, 'rootOfTrust')) === rootOfTrustKey(rot)),
  );
  const anchor = anchorOf(certs, input.roots);
  if (!linksHold(certs, descriptions) || !attestKeysAgree || !anchor) reasons.push('chain_untrusted');
  // 2. Dates: every certificate now, the root now and when it issued the one below it.
  if (!datesHold(certs, anchor, input.now)) reasons.push('certificate_expired');
  // 3. Revocation: any certificate of the chain, REVOKED or SUSPENDED.
  if (certs.some((c) => revocationStatus(input.revocation, c.parts.serialHex) !== null)) reasons.push('certificate_revoked');
  // 4. Hardware-backed: both security levels TEE or StrongBox and equal (Google's verifier: MISMATCHED_SECURITY_LEVELS),
  //    a root of trust, and a key generated inside the keystore (an imported key proves nothing about the device).
  const origin = hardwareProperty(leaf, 'origin');
  if (!SECURITY_LEVELS[level] || kd.keymasterSecurityLevel !== level || !rot || origin === undefined || Number(origin) !== ORIGIN_GENERATED) {
    reasons.push('software_keystore');
  }
  // 5. The device: bootloader locked, boot verified.
  if (rot && rot.deviceLocked !== true) reasons.push('device_unlocked');
  if (rot && rot.verifiedBootState !== BOOT_VERIFIED) reasons.push('boot_unverified');
  // 6. The app: the configured package, signed by its recorded signer.
  const wanted = Buffer.from(input.packageName, 'utf8');
  const pkg = appId?.packages.find((p) => p.name.equals(wanted));
  if (!pkg) reasons.push('package_mismatch');
  const recorded = input.recordedSigners?.map((s) => s.toLowerCase()) ?? [];
  // An empty record is no record: there is nothing to compare with. Any recorded signer suffices (a rotated key
  // leaves both the old and the new signer recorded, and the device states only the one it installed).
  if (recorded.length === 0) reasons.push('signer_unrecorded');
  else if (!recorded.some((s) => appId?.signatureDigests.includes(s))) reasons.push('signer_mismatch');

  const result: KeyAttestationResult = { reasons: [...new Set(reasons)] };
  // The attestationApplicationId is written by Android, not by the secure hardware: on a device whose bootloader is
  // unlocked or whose boot was not verified, the system that wrote it may be anyone's, so it names no build.
  const systemVouched = rot?.deviceLocked === true && rot.verifiedBootState === BOOT_VERIFIED;
  if (systemVouched && pkg && pkg.version >= 0n && pkg.version <= BigInt(Number.MAX_SAFE_INTEGER)) result.versionCode = Number(pkg.version);
  const securityLevel = SECURITY_LEVELS[level];
  if (securityLevel) result.securityLevel = securityLevel;
  return result;
}
