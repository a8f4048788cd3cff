import { randomBytes } from 'node:crypto';
import type { RequestContext } from './context';
import { requireDeviceKey } from '../threats/device-principal';
import { evaluateStub, type AttestOutcome } from '../attest/attest-stub';
import { verdictOf, type AttestReason, type AttestVerdict } from '../attest/reasons';
import { challengeIdOf, type ChallengeState } from '../data/attest-challenges-repo';
import { metrics } from '../metrics/registry';
import { validationFailed, type FieldError } from '../core/errors';
import { engineConfigured, engineFor, runEngine, type AttestRequestInput, type EngineName } from './attest/engines';
import { buildForVersionCode, type MatchedBuild } from './attest/build-match';
import { signVerdictToken } from './attest/verdict-token';

/** A challenge lives this long: enough for a device to ask its platform for a token and send it back. */
export const CHALLENGE_TTL_MS = 5 * 60_000;
/** A consumed or expired challenge is remembered this much longer, so a late replay is named as one. */
const CHALLENGE_MEMORY_MS = 60 * 60_000;

export interface AttestChallenge {
  nonce: string;
  expiresAt: Date;
}

/** A real engine's answer (docs/attestation.md): the stub's fields, plus what the verdict rests on and a token of it. */
export interface AttestVerdictAnswer {
  valid: boolean;
  verdict: AttestVerdict;
  reasons: AttestReason[];
  engine: EngineName;
  keyId: string | null;
  build: MatchedBuild | null;
  verdictToken: string;
}

export type AttestAnswer = AttestOutcome | AttestVerdictAnswer;

/** POST /v1/attest/challenges: 32 random bytes for the key's app, single use, CHALLENGE_TTL_MS. */
export async function createAttestChallenge(ctx: RequestContext): Promise<AttestChallenge> {
  const { appId } = requireDeviceKey(ctx, 'attest:verify');
  const nonce = randomBytes(32).toString('base64url');
  const now = ctx.clock.now();
  const expiresAt = new Date(now.getTime() + CHALLENGE_TTL_MS);
  await ctx.repos.attestChallenges.insert({ _id: challengeIdOf(nonce), appId, createdAt: now, expiresAt, usedAt: null, purgeAt: new Date(expiresAt.getTime() + CHALLENGE_MEMORY_MS) });
  return { nonce, expiresAt };
}

/** The contract's bounds (openapi AttestRequest), which REST checks before the call: held here for /graphql too. */
const MAX_TOKEN = 8192;
const MAX_NONCE = 128;
/** DCAppAttestService's key identifier: standard base64 of a SHA-256. */
const KEY_ID = /^[A-Za-z0-9+/]{43}=$/;

function checkBounds(input: AttestRequestInput): void {
  const errors: FieldError[] = [];
  if (input.token.length < 8 || input.token.length > MAX_TOKEN) errors.push({ pointer: '/token', message: `must be 8 to ${MAX_TOKEN} characters` });
  if (input.nonce.length < 8 || input.nonce.length > MAX_NONCE) errors.push({ pointer: '/nonce', message: `must be 8 to ${MAX_NONCE} characters` });
  if (input.keyId != null && !KEY_ID.test(input.keyId)) errors.push({ pointer: '/keyId', message: 'must be the standard base64 of a SHA-256 (44 characters)' });
  if (errors.length > 0) throw validationFailed(errors);
}

const CHALLENGE_REASONS: Record<Exclude<ChallengeState, 'live'>, AttestReason> = {
  unknown: 'nonce_unknown',
  expired: 'nonce_expired',
  replayed: 'nonce_replayed',
};

/**
 * POST /v1/attest/verify. An app that has not configured attestation keeps the spec's stub, answer for answer. For
 * one that has, the request's nonce must be a live challenge of the app (consumed here, before any cryptography: a
 * flood of replayed or invented tokens costs one database write each), then the engine of the request's platform and
 * form verifies the token against the app's configuration, its recorded signer and its registered builds.
 */
export async function verifyAttestation(ctx: RequestContext, input: AttestRequestInput): Promise<AttestAnswer> {
  const { appId } = requireDeviceKey(ctx, 'attest:verify');
  checkBounds(input);
  const config = await ctx.deps.instance.attestConfigs.of(ctx.repos, appId, ctx.deps.config.keyEncryptionKey);
  if (!config) return evaluateStub({ token: input.token, nonce: input.nonce, platform: input.platform });

  const engine = engineFor(input);
  let reasons: AttestReason[];
  let keyId: string | null = null;
  let build: MatchedBuild | null = null;
  const challenge = await ctx.repos.attestChallenges.consume(appId, input.nonce, ctx.clock.now());
  if (challenge !== 'live') {
    reasons = [CHALLENGE_REASONS[challenge]];
  } else if (!engineConfigured(config.doc, engine)) {
    reasons = ['engine_unconfigured'];
  } else {
    const result = await runEngine(ctx, appId, config, engine, input);
    reasons = result.reasons;
    keyId = result.keyId ?? null;
    if (result.versionCode !== undefined && result.packageName && verdictOf(reasons) !== 'untrusted') {
      build = await buildForVersionCode(ctx, appId, result.packageName, result.versionCode);
      if (!build) reasons = [...reasons, 'version_unregistered'];
    }
  }
  const verdict = verdictOf(reasons);
  metrics.attestVerdicts.inc({ engine, verdict, reason: reasons[0] ?? 'none' });
  ctx.deps.instance.verdictTally.add({ appId, at: ctx.clock.now(), engine, verdict, reason: reasons[0] ?? 'none' });
  const verdictToken = await signVerdictToken(ctx, { appId, verdict, engine, platform: input.platform, keyId, buildId: build?.id ?? null, nonce: input.nonce });
  return { valid: verdict !== 'untrusted', verdict, reasons, engine, keyId, build, verdictToken };
}
