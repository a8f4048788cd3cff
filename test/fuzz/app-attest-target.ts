// Fuzz target of the App Attest engine: untrusted bytes as an attestation object and as an assertion, verified the
// way the service verifies them, plus the strict CBOR decoder on its own. The engine answers reasons for any input;
// the only exception allowed anywhere is the decoder's CborError, which is what it is for.
import { X509Certificate, createHash, createPublicKey } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { verifyAppAssertion, verifyAppAttestation } from '../../src/attest/app-attest';
import { CborError, decodeStrictCbor } from '../../src/attest/cbor';
import { APPLE_APP_ATTEST_ROOTS } from '../../src/attest/roots/apple';

const FIXTURES = path.join(__dirname, '../fixtures/attestation/apple-app-attest');

interface Fixture {
  teamId: string;
  bundleId: string;
  verifyAt: string | null;
  attestation?: string | null;
  assertion?: { assertion: string; clientDataUtf8: string; publicKeyPem: string } | null;
}
const fixture = (name: string): Fixture => JSON.parse(readFileSync(path.join(FIXTURES, name), 'utf8')) as Fixture;

// The app, nonce, clock and key of one real attestation and assertion, so that mutants of those seeds get past the
// comparisons and reach the chain and signature checks.
const SEED = fixture('veehaitch-ios-14.2.json');
const APP = { teamId: SEED.teamId, bundleId: SEED.bundleId, environment: 'development' as const };
const CLIENT_DATA_HASH = createHash('sha256').update(SEED.assertion!.clientDataUtf8, 'utf8').digest();
const NOW = new Date(SEED.verifyAt!);
const ROOTS = APPLE_APP_ATTEST_ROOTS.map((r) => new X509Certificate(r.pem));
const KEY = {
  keyId: 'fuzz',
  publicKeySpki: createPublicKey(SEED.assertion!.publicKeyPem).export({ type: 'spki', format: 'der' }),
};

export function fuzzAppAttest(input: Buffer): void {
  verifyAppAttestation({ object: input, clientDataHash: CLIENT_DATA_HASH, app: APP, keyId: null, roots: ROOTS, now: NOW });
  verifyAppAssertion({ assertion: input, clientDataHash: CLIENT_DATA_HASH, app: APP, key: KEY });
  try {
    decodeStrictCbor(input);
  } catch (err) {
    if (!(err instanceof CborError)) throw err;
  }
}

/** Seeds: every real attestation object and assertion of the fixtures. */
export function appAttestSeeds(): Buffer[] {
  const seeds: Buffer[] = [];
  for (const name of readdirSync(FIXTURES).filter((f) => f.endsWith('.json')).sort()) {
    const f = fixture(name);
    if (f.attestation) seeds.push(Buffer.from(f.attestation, 'base64'));
    if (f.assertion) seeds.push(Buffer.from(f.assertion.assertion, 'base64'));
  }
  return seeds;
}
