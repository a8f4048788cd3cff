import type { RequestContext } from './context';
import { appAccess } from '../auth/authorize';
import { notFound, validationFailed, type FieldError } from '../core/errors';
import { sealSecret } from '../crypto/secret-box';
import type { AttestationConfigDoc, AppAttestEnvironment, DeviceIntegrityLevel } from '../data/attestation-configs-repo';
import { parsePlayIntegrityKeys } from '../attest/play-integrity';
import { recordAudit, actorOf } from './audit-service';
import { sealedKeyRecordId } from '../attest/sealed-key';

/** PUT /v1/apps/{id}/attestation: the whole configuration; a platform left out (or null) is not attested. */
export interface AttestationConfigInput {
  android?: {
    packageName: string;
    playIntegrity?: { decryptionKey: string; verificationKey: string } | null;
    keyAttestation?: boolean | null;
    minDeviceIntegrity?: DeviceIntegrityLevel | null;
    appSigningCertificates?: string[] | null;
  } | null;
  ios?: { teamId: string; bundleId: string; environment: AppAttestEnvironment } | null;
}

// Android's rule for an application id: two or more dot-separated segments, each a letter then letters, digits, `_`.
const PACKAGE_NAME = /^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$/;
// Apple team identifiers: ten upper-case letters and digits.
const TEAM_ID = /^[A-Z0-9]{10}$/;
// CFBundleIdentifier: letters, digits, hyphens and dots (Apple's documented alphabet).
const BUNDLE_ID = /^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$/;
// A SHA-256 certificate fingerprint as Play Console shows it (colon-separated hex pairs) or as plain hex.
const FINGERPRINT = /^(?:[0-9A-Fa-f]{2}:){31}[0-9A-Fa-f]{2}$|^[0-9A-Fa-f]{64}$/;
/** Play App Signing has one app signing key, plus the previous one after an upgrade: a few, never a list. */
const MAX_APP_SIGNING_CERTIFICATES = 5;

/** The fingerprint as the engines compare it: lowercase hex, no colons. */
const normalFingerprint = (text: string): string => text.replace(/:/g, '').toLowerCase();

/** An app's attestation configuration (rules:read, or staff); 404 when it has none (it keeps the stub engine). */
export async function getAttestationConfig(ctx: RequestContext, appId: string): Promise<AttestationConfigDoc> {
  await appAccess(ctx, 'rules:read', appId, { write: false });
  const doc = await ctx.repos.attestationConfigs.find(appId);
  if (!doc) throw notFound('Attestation configuration');
  return doc;
}

function inputErrors(input: AttestationConfigInput): FieldError[] {
  const errors: FieldError[] = [];
  const { android, ios } = input;
  if (!android && !ios) errors.push({ pointer: '', message: 'configure android, ios or both' });
  if (android) {
    if (android.packageName.length > 255 || !PACKAGE_NAME.test(android.packageName)) {
      errors.push({ pointer: '/android/packageName', message: 'must be an Android application id (com.example.app)' });
    }
    if (!android.playIntegrity && !android.keyAttestation) {
      errors.push({ pointer: '/android', message: 'configure playIntegrity, keyAttestation or both' });
    }
    if (android.playIntegrity) errors.push(...parsePlayIntegrityKeys(android.playIntegrity).errors);
    const certificates = android.appSigningCertificates;
    if (certificates) {
      if (certificates.length < 1 || certificates.length > MAX_APP_SIGNING_CERTIFICATES) {
        errors.push({ pointer: '/android/appSigningCertificates', message: `must list 1 to ${MAX_APP_SIGNING_CERTIFICATES} fingerprints, or be null` });
      }
      certificates.slice(0, MAX_APP_SIGNING_CERTIFICATES).forEach((c, i) => {
        if (!FINGERPRINT.test(c)) errors.push({ pointer: `/android/appSigningCertificates/${i}`, message: 'must be a SHA-256 certificate fingerprint (64 hex digits, colons allowed)' });
      });
    }
  }
  if (ios) {
    if (!TEAM_ID.test(ios.teamId)) errors.push({ pointer: '/ios/teamId', message: 'must be an Apple team id, 10 upper-case letters and digits' });
    if (ios.bundleId.length > 255 || !BUNDLE_ID.test(ios.bundleId)) errors.push({ pointer: '/ios/bundleId', message: 'must be a bundle id (letters, digits, hyphens, dots)' });
  }
  return errors;
}

/**
 * Sets the app's attestation configuration (rules:write, or admin staff), replacing the previous one whole. The Play
 * Integrity decryption key is sealed with the key-encryption key, bound to the app id; it is never shown again.
 * Audited `attestation.configured` with which engines are on, never a key.
 */
export async function configureAttestation(ctx: RequestContext, appId: string, input: AttestationConfigInput): Promise<AttestationConfigDoc> {
  await appAccess(ctx, 'rules:write', appId, { write: true });
  const errors = inputErrors(input);
  if (errors.length) throw validationFailed(errors, 'The attestation configuration cannot be used.');
  const kek = ctx.deps.config.keyEncryptionKey;
  const { android, ios } = input;
  const doc: AttestationConfigDoc = {
    _id: appId,
    android: android
      ? {
          packageName: android.packageName,
          playIntegrity: android.playIntegrity
            ? { decryptionKey: sealSecret(android.playIntegrity.decryptionKey, kek, sealedKeyRecordId(appId)), verificationKey: android.playIntegrity.verificationKey }
            : null,
          keyAttestation: Boolean(android.keyAttestation),
          minDeviceIntegrity: android.minDeviceIntegrity ?? 'MEETS_DEVICE_INTEGRITY',
          appSigningCertificates: android.appSigningCertificates ? [...new Set(android.appSigningCertificates.map(normalFingerprint))] : null,
        }
      : null,
    ios: ios ? { teamId: ios.teamId, bundleId: ios.bundleId, environment: ios.environment } : null,
    updatedAt: ctx.clock.now(),
  };
  await ctx.repos.attestationConfigs.replace(doc);
  ctx.deps.instance.attestConfigs.forget(appId);
  await recordAudit(ctx, {
    appId,
    action: 'attestation.configured',
    details: {
      androidPackage: doc.android?.packageName ?? null,
      playIntegrity: Boolean(doc.android?.playIntegrity),
      keyAttestation: doc.android?.keyAttestation ?? false,
      minDeviceIntegrity: doc.android?.minDeviceIntegrity ?? null,
      appSigningCertificates: doc.android?.appSigningCertificates?.length ?? 0,
      iosApp: doc.ios ? `${doc.ios.teamId}.${doc.ios.bundleId}` : null,
      iosEnvironment: doc.ios?.environment ?? null,
    },
    actor: actorOf(ctx),
  });
  return doc;
}
