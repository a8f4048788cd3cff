import { DomainError } from '../core/errors';

/**
 * The stub attestation engine (docs/contract.md, "Attestation (stub)"). It reads the token as a compact JWS and looks at its claims, but verifies
 * NO signature and asks NO platform: its verdicts are not evidence of anything and must not gate security decisions.
 * It exists so clients can integrate against a stable contract before a real engine lands.
 *
 * Rules, each adding its reason when it fires:
 * - not a compact JWS (three base64url parts, JSON object header and payload): `malformed_token`, valid false, untrusted
 * - no nonce claim (`nonce`, or Play Integrity's `requestDetails.nonce`): `nonce_missing`, untrusted
 * - a nonce claim other than the request's nonce: `nonce_mismatch`, untrusted
 * - the payload names or implies another platform: `platform_mismatch`, untrusted
 * - the payload reports a weak integrity level, suspicious:
 *   - `deviceIntegrity.deviceRecognitionVerdict` without MEETS_DEVICE_INTEGRITY or MEETS_STRONG_INTEGRITY
 *     (e.g. MEETS_BASIC_INTEGRITY only, or empty): `device_integrity_weak`
 *   - `appIntegrity.appRecognitionVerdict` other than PLAY_RECOGNIZED: `app_not_recognized`
 *   - `accountDetails.appLicensingVerdict` UNLICENSED: `app_unlicensed`
 *   - `riskMetric` (App Attest) "high", or a number >= RISK_METRIC_HIGH: `risk_metric_high`
 * - otherwise trusted.
 */

export type AttestVerdict = 'trusted' | 'suspicious' | 'untrusted';

export interface AttestInput {
  token: string;
  nonce: string;
  platform: 'android' | 'ios';
}

export interface AttestOutcome {
  valid: boolean;
  verdict: AttestVerdict;
  reasons: string[];
  engine: 'stub';
}

/** App Attest's risk metric counts attestations of one device over 30 days; a handful is normal, more is not. */
export const RISK_METRIC_HIGH = 5;

const BASE64URL_TEXT = /^[A-Za-z0-9_\-.=]+$/;
const SEGMENT = /^[A-Za-z0-9_-]+$/;

type Claims = Record<string, unknown>;

function isObject(value: unknown): value is Claims {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function decodeSegment(segment: string): Claims | null {
  if (!SEGMENT.test(segment)) return null;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return isObject(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

/** Header and payload of a compact JWS, unverified; null when the text is not one. */
function readCompactJws(unverifiedToken: string): { header: Claims; payload: Claims } | null {
  const parts = unverifiedToken.split('.');
  if (parts.length !== 3 || !parts[2]) return null;
  const header = decodeSegment(parts[0]);
  const payload = decodeSegment(parts[1]);
  return header && payload ? { header, payload } : null;
}

function nonceClaim(payload: Claims): string | undefined {
  if (typeof payload.nonce === 'string') return payload.nonce;
  const details = payload.requestDetails;
  if (isObject(details) && typeof details.nonce === 'string') return details.nonce;
  return undefined;
}

/** The platform the payload names (`platform`) or whose verdict shape it carries; undefined when it says nothing. */
function platformClaim(payload: Claims): string | undefined {
  if (typeof payload.platform === 'string') return payload.platform;
  if ('deviceIntegrity' in payload || 'appIntegrity' in payload || 'requestDetails' in payload) return 'android';
  if ('riskMetric' in payload || 'appAttest' in payload) return 'ios';
  return undefined;
}

function weakIntegrityReasons(payload: Claims): string[] {
  const reasons: string[] = [];
  const device = payload.deviceIntegrity;
  if (isObject(device)) {
    const verdicts = Array.isArray(device.deviceRecognitionVerdict) ? device.deviceRecognitionVerdict : [];
    if (!verdicts.includes('MEETS_DEVICE_INTEGRITY') && !verdicts.includes('MEETS_STRONG_INTEGRITY')) reasons.push('device_integrity_weak');
  }
  const app = payload.appIntegrity;
  if (isObject(app) && app.appRecognitionVerdict !== 'PLAY_RECOGNIZED') reasons.push('app_not_recognized');
  const account = payload.accountDetails;
  if (isObject(account) && account.appLicensingVerdict === 'UNLICENSED') reasons.push('app_unlicensed');
  const risk = payload.riskMetric;
  if ((typeof risk === 'string' && risk.toLowerCase() === 'high') || (typeof risk === 'number' && risk >= RISK_METRIC_HIGH)) {
    reasons.push('risk_metric_high');
  }
  return reasons;
}

/** Applies the stub rules. Throws validation_failed (422) when the token is not even base64url text. */
export function evaluateStub(input: AttestInput): AttestOutcome {
  const unverifiedToken = input.token;
  if (!BASE64URL_TEXT.test(unverifiedToken)) {
    throw new DomainError('validation_failed', 'The token is not base64url text.', {
      errors: [{ pointer: '/token', message: 'must be base64url text (a compact JWS)' }],
    });
  }
  const jws = readCompactJws(unverifiedToken);
  if (!jws) return { valid: false, verdict: 'untrusted', reasons: ['malformed_token'], engine: 'stub' };

  const untrusted: string[] = [];
  const nonce = nonceClaim(jws.payload);
  if (nonce === undefined) untrusted.push('nonce_missing');
  else if (nonce !== input.nonce) untrusted.push('nonce_mismatch');
  const platform = platformClaim(jws.payload);
  if (platform !== undefined && platform !== input.platform) untrusted.push('platform_mismatch');
  const weak = weakIntegrityReasons(jws.payload);

  const verdict: AttestVerdict = untrusted.length > 0 ? 'untrusted' : weak.length > 0 ? 'suspicious' : 'trusted';
  return { valid: true, verdict, reasons: [...untrusted, ...weak], engine: 'stub' };
}
