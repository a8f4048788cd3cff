// Fuzz target and seeds of the Android Key Attestation engine: untrusted bytes as the chain a device sent, verified
// against Google's built-in roots with the inputs of a real chain (its challenge, package and signer, at its time),
// so a mutant that keeps the structure reaches every check. The engine must answer, never throw, and answer only
// with reasons of the vocabulary, each once.
import { X509Certificate } from 'node:crypto';
import { verifyKeyAttestation, parseRevocationList, type TrustRoot } from '../../src/attest/key-attestation';
import { ATTEST_REASONS } from '../../src/attest/reasons';
import { GOOGLE_ATTESTATION_ROOTS } from '../../src/attest/roots/google';
import { GOOGLE_REVOCATION_SNAPSHOT } from '../../src/attest/roots/google-revocation';
import { androidKeyChain, androidKeyChains } from '../fixtures/android-key-corpus';

/** The inputs of google-rkp-pixel7pro-2023, the chain every fuzz input is verified as. */
const BASE = 'google-rkp-pixel7pro-2023';
let inputs: { challenge: Buffer; packageName: string; signers: string[]; now: Date; roots: TrustRoot[] } | null = null;

function fixedInputs(): NonNullable<typeof inputs> {
  if (inputs) return inputs;
  const { meta } = androidKeyChain(BASE);
  const app = meta.attestationApplicationId!;
  inputs = {
    challenge: Buffer.from(meta.challenge!.hex!, 'hex'),
    packageName: app.packageInfos[0].packageName,
    signers: app.signatureDigestsSha256Hex,
    now: new Date(meta.verifyAt!),
    roots: GOOGLE_ATTESTATION_ROOTS.map((r) => ({ cert: new X509Certificate(r.pem), notBefore: r.notBefore, notAfter: r.notAfter })),
  };
  return inputs;
}

const REVOCATION = parseRevocationList(GOOGLE_REVOCATION_SNAPSHOT);
const KNOWN: ReadonlySet<string> = new Set(ATTEST_REASONS);

export function fuzzKeyAttestation(input: Buffer): void {
  const { challenge, packageName, signers, now, roots } = fixedInputs();
  const result = verifyKeyAttestation({ chain: input, challenge, packageName, recordedSigners: signers, roots, revocation: REVOCATION, now });
  const { reasons } = result;
  if (!Array.isArray(reasons) || reasons.some((r) => !KNOWN.has(r)) || new Set(reasons).size !== reasons.length) {
    throw new Error(`key attestation answered outside its contract: ${JSON.stringify(reasons)}`);
  }
  if (reasons.includes('token_malformed') && (reasons.length !== 1 || result.versionCode !== undefined || result.securityLevel !== undefined)) {
    throw new Error('token_malformed came with other findings');
  }
}

/** Seeds: every real chain of the fixture folder (and the stand-alone certificate). */
export function keyAttestationSeeds(): Buffer[] {
  return androidKeyChains().map((c) => c.chain);
}
