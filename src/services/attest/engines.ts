import { createHash } from 'node:crypto';
import type { RequestContext } from '../context';
import type { AttestationConfigDoc } from '../../data/attestation-configs-repo';
import type { AttestAppConfig } from '../../attest/state/config-cache';
import type { AttestReason } from '../../attest/reasons';
import { strictBase64url } from '../../attest/strict-base64';
import { decodeStrictCbor } from '../../attest/cbor';
import { verifyAppAssertion, verifyAppAttestation, type AppAttestApp } from '../../attest/app-attest';
import { verifyKeyAttestation } from '../../attest/key-attestation';
import { verifyPlayIntegrity } from '../../attest/play-integrity';
import { recordedAndroidSigners } from './build-match';

export type EngineName = 'app_attest' | 'play_integrity' | 'key_attestation';

export interface AttestRequestInput {
  token: string;
  nonce: string;
  platform: 'android' | 'ios';
  keyId?: string | null;
}

/** What an engine concluded; `versionCode` and `packageName` name the build the device runs, when the token says. */
export interface EngineResult {
  engine: EngineName;
  reasons: AttestReason[];
  keyId?: string;
  versionCode?: number;
  packageName?: string;
}

/**
 * Which engine a request is for: iOS is App Attest; on Android a compact JWE (five dot-separated parts) is a Play
 * Integrity token, anything else a key attestation chain. Decided from the request's form before anything is
 * verified, so that a token meant for an engine the app did not configure is refused as such.
 */
export function engineFor(input: AttestRequestInput): EngineName {
  if (input.platform === 'ios') return 'app_attest';
  return input.token.split('.').length === 5 ? 'play_integrity' : 'key_attestation';
}

/** Whether the app configured the engine: an app attests only what it chose to. */
export function engineConfigured(config: AttestationConfigDoc, engine: EngineName): boolean {
  if (engine === 'app_attest') return Boolean(config.ios);
  if (engine === 'play_integrity') return Boolean(config.android?.playIntegrity);
  return Boolean(config.android?.keyAttestation);
}

const nonceBytes = (nonce: string) => Buffer.from(nonce, 'utf8');
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest();

/** Runs the engine the request is for; the challenge was consumed already. Never throws for what a device sent. */
export async function runEngine(ctx: RequestContext, appId: string, config: AttestAppConfig, engine: EngineName, input: AttestRequestInput): Promise<EngineResult> {
  if (engine === 'app_attest') return appAttest(ctx, appId, config.doc.ios!, input);
  const android = config.doc.android!;
  // With Play App Signing, devices install Google's signature, not the upload key the scans recorded: the operator's
  // fingerprints of it win when given.
  const recordedSigners = android.appSigningCertificates?.length ? android.appSigningCertificates : await recordedAndroidSigners(ctx, appId, android.packageName);
  if (engine === 'play_integrity') {
    const result = await verifyPlayIntegrity({
      token: input.token,
      keys: config.playIntegrityKeys!,
      packageName: android.packageName,
      nonce: input.nonce,
      recordedSigners,
      minDeviceIntegrity: android.minDeviceIntegrity,
      now: ctx.clock.now(),
    });
    return { engine, ...result, packageName: android.packageName };
  }
  const chain = strictBase64url(input.token);
  if (!chain) return { engine, reasons: ['token_malformed'] };
  const trust = ctx.deps.attestTrust;
  const result = verifyKeyAttestation({
    chain,
    challenge: nonceBytes(input.nonce),
    packageName: android.packageName,
    recordedSigners,
    roots: trust.googleRoots,
    revocation: trust.revocation,
    now: ctx.clock.now(),
  });
  return { engine, reasons: result.reasons, versionCode: result.versionCode, packageName: android.packageName };
}

/**
 * App Attest: without `keyId` the token is an attestation, which registers the key once it verifies; with one, an
 * assertion by a registered key, whose counter must rise (a compare-and-swap: two instances never accept one counter).
 * The signature is checked before the counter moves, so a forged assertion cannot burn counters.
 */
async function appAttest(ctx: RequestContext, appId: string, ios: NonNullable<AttestationConfigDoc['ios']>, input: AttestRequestInput): Promise<EngineResult> {
  const engine = 'app_attest' as const;
  const app: AppAttestApp = ios;
  const object = strictBase64url(input.token);
  if (!object) return { engine, reasons: ['token_malformed'] };
  const clientDataHash = sha256(nonceBytes(input.nonce));
  if (!isAssertion(object, input.keyId)) {
    const result = verifyAppAttestation({ object, clientDataHash, app, keyId: input.keyId ?? null, roots: ctx.deps.attestTrust.appleRoots, now: ctx.clock.now() });
    if (!result.key) return { engine, reasons: result.reasons };
    const { keyId, publicKeySpki } = result.key;
    await ctx.repos.appAttestKeys.register({
      appId, keyId, publicKeySpki: publicKeySpki.toString('base64'), environment: ios.environment, counter: 0, attestedAt: ctx.clock.now(), lastAssertedAt: null,
    });
    return { engine, reasons: [], keyId };
  }
  const keyId = input.keyId!;
  const stored = await ctx.repos.appAttestKeys.find(appId, keyId);
  if (!stored) return { engine, reasons: ['key_unknown'], keyId };
  // A key attested in development keeps asserting nothing once the app is configured for production (and back).
  if (stored.environment !== ios.environment) return { engine, reasons: ['environment_mismatch'], keyId };
  const publicKeySpki = Buffer.from(stored.publicKeySpki, 'base64');
  const result = verifyAppAssertion({ assertion: object, clientDataHash, app, key: { keyId, publicKeySpki } });
  if (result.reasons.length > 0 || result.counter === undefined) return { engine, reasons: result.reasons, keyId };
  const advanced = await ctx.repos.appAttestKeys.advanceCounter(appId, keyId, result.counter, ctx.clock.now());
  return { engine, reasons: advanced ? [] : ['counter_replayed'], keyId };
}

/** An assertion is a CBOR map with `authenticatorData`; an attestation has `fmt`. Only asked when a keyId came with it. */
function isAssertion(object: Buffer, keyId: string | null | undefined): boolean {
  if (keyId == null) return false;
  try {
    const decoded = decodeStrictCbor(object);
    return decoded instanceof Map ? decoded.has('authenticatorData') : typeof decoded === 'object' && decoded !== null && 'authenticatorData' in decoded;
  } catch {
    return true; // malformed either way: the assertion path says token_malformed
  }
}
