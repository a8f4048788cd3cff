import type { AttestationConfig, Resolvers } from '../src/generated/graphql';
import type { AttestationConfigDoc } from '../src/data/attestation-configs-repo';
import { createAttestChallenge, verifyAttestation } from '../src/services/attest-service';
import { configureAttestation, getAttestationConfig } from '../src/services/attestation-config-service';

/** Document -> GraphQL object: the sealed decryption key is only ever `set`. */
const toAttestationConfig = (doc: AttestationConfigDoc): AttestationConfig => ({
  android: doc.android
    ? {
        packageName: doc.android.packageName,
        playIntegrity: doc.android.playIntegrity ? { decryptionKey: 'set', verificationKey: doc.android.playIntegrity.verificationKey } : null,
        keyAttestation: doc.android.keyAttestation,
        minDeviceIntegrity: doc.android.minDeviceIntegrity,
        appSigningCertificates: doc.android.appSigningCertificates ?? null,
      }
    : null,
  ios: doc.ios,
  updatedAt: doc.updatedAt,
});

export const attestResolvers: Resolvers = {
  Query: {
    attestationConfig: async (_p, { appId }, ctx) => toAttestationConfig(await getAttestationConfig(ctx, appId)),
  },
  Mutation: {
    verifyAttest: (_p, { input }, ctx) => verifyAttestation(ctx, input),
    createAttestChallenge: (_p, _a, ctx) => createAttestChallenge(ctx),
    configureAttestation: async (_p, { appId, input }, ctx) => toAttestationConfig(await configureAttestation(ctx, appId, input)),
  },
};
