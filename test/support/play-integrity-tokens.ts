// Play Integrity tokens for tests, minted the way Google mints them but with keys made here: only Google holds the
// keys of real apps, so no real token can be a fixture. The shapes are Google's:
// - the token: "a nested JSON Web Token (JWT), that is JWE of JWS. JWE uses A256KW as a key wrapping algorithm and
//   A256GCM as a content encryption algorithm. JWS uses ES256 as a signing algorithm."
//   (https://developer.android.com/reference/unity/class/Google/Play/Integrity/IntegrityManager, and
//   https://developer.android.com/google/play/integrity/classic for decrypting it locally); the protected headers
//   are {"alg":"A256KW","enc":"A256GCM"} and {"alg":"ES256"}, nothing else;
// - the keys, as Play Console gives them: "base64-encoded using default flags", the AES key raw, the verification key
//   a DER SubjectPublicKeyInfo (https://developer.android.com/google/play/integrity/classic);
// - the verdict, field for field a classic one (https://developer.android.com/google/play/integrity/verdicts):
//   timestampMillis and versionCode are strings (int64 in Google's JSON,
//   https://pub.dev/documentation/googleapis/latest/playintegrity_v1/AppIntegrity-class.html), and each
//   certificateSha256Digest entry is an unpadded base64url SHA-256 ("base64 web-safe encoded",
//   https://googleapis.dev/dotnet/Google.Apis.PlayIntegrity.v1/latest/api/Google.Apis.PlayIntegrity.v1.Data.AppIntegrity.html).
//
// Use: `const keys = playIntegrityKeys();` configure the app with `keys.config`, then
// `await mintClassicToken(keys, { requestDetails: { nonce } })` for a genuine token attesting `nonce`, with any other
// field of the default verdict overridden the same way (`undefined` removes a field).
import { createECDH, createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { CompactEncrypt, CompactSign, type CompactJWEHeaderParameters, type CompactJWSHeaderParameters } from 'jose';
import type { StandardIntegrityDecoder } from '../../src/attest/play-integrity';

export interface PlayIntegrityTestKeys {
  /** The raw AES-256 key that wraps each token's content key (Google's side and the app's alike). */
  aesKey: Uint8Array;
  /** The EC P-256 key Google signs verdicts with; tests sign with it, the service never sees it. */
  signingKey: KeyObject;
  verificationKey: KeyObject;
  /** The two keys as an operator pastes them from Play Console into `PUT /v1/apps/{id}/attestation`. */
  config: { decryptionKey: string; verificationKey: string };
}

/**
 * A fresh pair of keys for one app; with a `seed`, the same pair every time (fuzz seeds and saved tokens must open in
 * another process), derived from the seed's SHA-256.
 */
export function playIntegrityKeys(seed?: string): PlayIntegrityTestKeys {
  const aesKey = new Uint8Array(seed === undefined ? randomBytes(32) : createHash('sha256').update(`aes:${seed}`).digest());
  const { publicKey, privateKey } = seed === undefined ? generateKeyPairSync('ec', { namedCurve: 'P-256' }) : seededEcKey(seed);
  return {
    aesKey,
    signingKey: privateKey,
    verificationKey: publicKey,
    config: {
      decryptionKey: Buffer.from(aesKey).toString('base64'),
      verificationKey: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
    },
  };
}

/** An EC P-256 key pair whose private scalar is SHA-256 of the seed (at or above the curve order about once in 2^32 seeds: setPrivateKey then throws). */
function seededEcKey(seed: string): { publicKey: KeyObject; privateKey: KeyObject } {
  const d = createHash('sha256').update(`ec:${seed}`).digest();
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(d);
  const point = ecdh.getPublicKey(); // 04 || x || y
  const jwk = { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33).toString('base64url') };
  return { privateKey: createPrivateKey({ key: { ...jwk, d: d.toString('base64url') }, format: 'jwk' }), publicKey: createPublicKey({ key: jwk, format: 'jwk' }) };
}

/** What the default verdict attests; tests compare against these or override them. */
export const CLASSIC_DEFAULTS = {
  packageName: 'com.example.app',
  /** 32 bytes in unpadded base64url, the shape of the service's challenges (43 characters). */
  nonce: 'c2hpZWxkZ2F0ZSBwbGF5IGludGVncml0eSBub25jZSE',
  /** The recorded signer: SHA-256 of the signing certificate, lowercase hex as the signers registry keeps it. */
  signerSha256Hex: createHash('sha256').update('the app signing certificate (test)').digest('hex'),
  versionCode: 42,
} as const;

/** A certificateSha256Digest entry for a lowercase hex SHA-256: unpadded base64url, as Google writes it. */
export function signerDigest(sha256Hex: string): string {
  return Buffer.from(sha256Hex, 'hex').toString('base64url');
}

/**
 * The verdict of a genuine classic request: recognized app signed by the recorded signer, a device meeting device
 * integrity, a licensed user, issued at `now`. Exactly the fields Google sends by default, as strings where Google
 * sends strings; opt-in sections (recentDeviceActivity, environmentDetails) are left out, as for an app that did
 * not opt in.
 */
export function classicVerdict(now: Date = new Date()): Record<string, unknown> {
  return {
    requestDetails: {
      requestPackageName: CLASSIC_DEFAULTS.packageName,
      timestampMillis: String(now.getTime()),
      nonce: CLASSIC_DEFAULTS.nonce,
    },
    appIntegrity: {
      appRecognitionVerdict: 'PLAY_RECOGNIZED',
      packageName: CLASSIC_DEFAULTS.packageName,
      certificateSha256Digest: [signerDigest(CLASSIC_DEFAULTS.signerSha256Hex)],
      versionCode: String(CLASSIC_DEFAULTS.versionCode),
    },
    deviceIntegrity: {
      deviceRecognitionVerdict: ['MEETS_DEVICE_INTEGRITY'],
    },
    accountDetails: {
      appLicensingVerdict: 'LICENSED',
    },
  };
}

/** Overrides merged into the default verdict: objects merge, anything else replaces, `undefined` removes. */
export type VerdictOverrides = { [key: string]: unknown };

export interface MintOptions {
  /** The time the verdict says it was issued (default now). */
  now?: Date;
  /** Protected headers, to mint tokens Google would not (default Google's). */
  jweHeader?: CompactJWEHeaderParameters;
  jwsHeader?: CompactJWSHeaderParameters;
  /** Keys other than the app's: a token for another app, or signed by someone else. */
  encryptWith?: Uint8Array;
  signWith?: KeyObject | Uint8Array;
  /** The JWS payload bytes exactly (not a verdict object): malformed or oversized payloads. */
  rawPayload?: Uint8Array | string;
}

/** A classic token: JWE(A256KW, A256GCM) of JWS(ES256) of the default verdict with `overrides` applied. */
export async function mintClassicToken(keys: PlayIntegrityTestKeys, overrides: VerdictOverrides = {}, options: MintOptions = {}): Promise<string> {
  const payload = options.rawPayload ?? JSON.stringify(merge(classicVerdict(options.now), overrides));
  const jws = await new CompactSign(typeof payload === 'string' ? new TextEncoder().encode(payload) : payload)
    .setProtectedHeader(options.jwsHeader ?? { alg: 'ES256' })
    .sign(options.signWith ?? keys.signingKey);
  return encryptClassic(jws, options.encryptWith ?? keys.aesKey, options.jweHeader);
}

/** The outer layer alone: any text (a JWS, or not) encrypted as Google encrypts a classic token. */
export async function encryptClassic(plaintext: string, aesKey: Uint8Array, header: CompactJWEHeaderParameters = { alg: 'A256KW', enc: 'A256GCM' }): Promise<string> {
  return new CompactEncrypt(new TextEncoder().encode(plaintext)).setProtectedHeader(header).encrypt(aesKey);
}

/**
 * A StandardIntegrityDecoder that answers from a table instead of Google's server: `decode` resolves with the verdict
 * stored for the token (the tokenPayloadExternal Google would return) and rejects for any other token, as Google
 * refuses a token it did not issue. The package name is not checked here; the verdict's checks do that.
 */
export function fakeStandardDecoder(payloads: Map<string, unknown>): StandardIntegrityDecoder {
  return {
    async decode(_packageName: string, token: string): Promise<unknown> {
      if (!payloads.has(token)) throw new Error('INVALID_ARGUMENT: integrity token cannot be decoded');
      return payloads.get(token);
    },
  };
}

/** `overrides` applied to a copy of `base`. */
export function merge(base: Record<string, unknown>, overrides: VerdictOverrides): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(overrides)) {
    const current = out[key];
    if (value === undefined) delete out[key];
    else if (isPlainObject(value) && isPlainObject(current)) out[key] = merge(current, value);
    // defineProperty, not assignment: a `__proto__` key must become a field of the verdict, not its prototype.
    else Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
