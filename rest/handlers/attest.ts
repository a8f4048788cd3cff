import type { RestHandler } from '../handler';
import { execute } from '../support/execute';
import type { components } from '../../src/generated/openapi';
import {
  AttestationConfigDocument,
  ConfigureAttestationDocument,
  CreateAttestChallengeDocument,
  VerifyAttestDocument,
  type AttestationConfigFieldsFragment,
} from '../../src/generated/rest-operations';

type RestAttestationConfig = components['schemas']['AttestationConfig'];

export const verifyAttest: RestHandler<'verifyAttest'> = async (call, ctx) => {
  const body = call.body;
  const { verifyAttest: r } = await execute(ctx, VerifyAttestDocument, {
    input: { token: body.token, nonce: body.nonce, platform: body.platform, keyId: body.keyId ?? null },
  });
  // An app without attestation keeps the spec's stub answer exactly: four fields, nothing added.
  if (r.engine === 'stub') return call.answer(200, { valid: r.valid, verdict: r.verdict, reasons: r.reasons, engine: 'stub' });
  call.answer(200, {
    valid: r.valid,
    verdict: r.verdict,
    reasons: r.reasons,
    engine: r.engine as 'app_attest' | 'play_integrity' | 'key_attestation',
    keyId: r.keyId ?? null,
    build: r.build ?? null,
    verdictToken: r.verdictToken!,
  });
};

export const createAttestChallenge: RestHandler<'createAttestChallenge'> = async (call, ctx) => {
  const { createAttestChallenge: c } = await execute(ctx, CreateAttestChallengeDocument, {});
  call.answer(201, { nonce: c.nonce, expiresAt: new Date(c.expiresAt).toISOString() });
};

/** Public and cacheable: an app's backend fetches it to check verdict tokens offline. Not a GraphQL operation: it reads no tenant's data. */
export const getAttestJwks: RestHandler<'getAttestJwks'> = async (call, ctx) => {
  call.res.setHeader('Cache-Control', 'public, max-age=300');
  call.answer(200, (await ctx.deps.attestKeys.publicJwks()) as components['schemas']['Jwks']);
};

const restConfig = (c: AttestationConfigFieldsFragment): RestAttestationConfig => ({
  android: c.android ? { ...c.android, playIntegrity: c.android.playIntegrity ? { decryptionKey: 'set', verificationKey: c.android.playIntegrity.verificationKey } : null } : null,
  ios: c.ios ?? null,
  updatedAt: new Date(c.updatedAt).toISOString(),
});

export const getAttestationConfig: RestHandler<'getAttestationConfig'> = async (call, ctx) => {
  const { attestationConfig } = await execute(ctx, AttestationConfigDocument, { appId: call.params.id });
  call.answer(200, restConfig(attestationConfig));
};

export const configureAttestation: RestHandler<'configureAttestation'> = async (call, ctx) => {
  const { android, ios } = call.body;
  const input = {
    android: android
      ? {
          packageName: android.packageName,
          playIntegrity: android.playIntegrity ?? null,
          keyAttestation: android.keyAttestation ?? null,
          minDeviceIntegrity: android.minDeviceIntegrity ?? null,
          appSigningCertificates: android.appSigningCertificates ?? null,
        }
      : null,
    ios: ios ?? null,
  };
  const { configureAttestation: c } = await execute(ctx, ConfigureAttestationDocument, { appId: call.params.id, input });
  call.answer(200, restConfig(c));
};
