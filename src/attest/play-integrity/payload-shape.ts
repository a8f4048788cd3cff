import { strictBase64url } from '../strict-base64';

/**
 * Reads a decoded integrity verdict into the few values the checks use, or null when it is not the shape Google
 * documents (`token_malformed`). Sources for each field:
 * - https://developer.android.com/google/play/integrity/verdicts (the payload, its sections, classic `nonce` and
 *   standard `requestHash`, `testingDetails`)
 * - https://googleapis.dev/dotnet/Google.Apis.PlayIntegrity.v1/latest/api/Google.Apis.PlayIntegrity.v1.Data.AppIntegrity.html
 *   (`certificateSha256Digest`: "The SHA256 hash of the requesting app's signing certificates (base64 web-safe
 *   encoded). Set iff app_recognition_verdict != UNEVALUATED", the same for `packageName` and `versionCode`)
 * - https://pub.dev/documentation/googleapis/latest/playintegrity_v1/AppIntegrity-class.html (`versionCode` is a
 *   String: an int64, which Google's JSON writes as a decimal string; `timestampMillis` likewise)
 *
 * Only own properties are read, so `__proto__`, `constructor` or `toString` keys in the JSON mean nothing; no object of
 * the input is copied or merged. Fields the checks do not use (accountDetails, environmentDetails, ...) are ignored.
 * Absent optional parts read as the weakest answer: no device labels, not a test response (Google sends one only
 * for testers).
 */
export interface VerdictFacts {
  requestPackageName: string;
  /** Classic requests carry the app's nonce; standard ones a requestHash. Absent is a challenge mismatch, not malformed. */
  nonce?: string;
  requestHash?: string;
  timestampMillis: number;
  appRecognitionVerdict: string;
  /** Present iff appRecognitionVerdict is not UNEVALUATED, as Google documents. */
  app?: { packageName: string; signerDigestsHex: string[]; versionCode: number };
  deviceLabels: string[];
  isTestingResponse: boolean;
}

/** More entries than any real verdict has (a few signing certificates, four device labels): a bound on the work. */
const MAX_LIST = 64;
/** Decimal digits of an int64 that a JavaScript number holds exactly (Number.isSafeInteger checks the rest). */
const DECIMAL = /^[0-9]{1,16}$/;
/** A SHA-256 in base64url: 43 characters; one `=` of padding is allowed, since "web-safe" does not say unpadded. */
const DIGEST = /^[A-Za-z0-9_-]{43}=?$/;

type Json = Record<string, unknown>;

class Malformed extends Error {}

export function readVerdict(payload: unknown): VerdictFacts | null {
  try {
    return read(payload);
  } catch {
    // Malformed, or an object whose getter or proxy trap throws (a standard decoder may hand over objects rather
    // than parsed JSON): neither is a verdict, and neither may escape.
    return null;
  }
}

function read(payload: unknown): VerdictFacts {
  const root = object(payload);
  const request = object(own(root, 'requestDetails'));
  const app = object(own(root, 'appIntegrity'));
  const deviceValue = own(root, 'deviceIntegrity');
  const device = deviceValue === undefined ? {} : object(deviceValue);
  const testingValue = own(root, 'testingDetails');
  const testing = testingValue === undefined ? {} : object(testingValue);

  const appRecognitionVerdict = string(own(app, 'appRecognitionVerdict'));
  const labelsValue = own(device, 'deviceRecognitionVerdict');
  const isTestingValue = own(testing, 'isTestingResponse');
  if (isTestingValue !== undefined && typeof isTestingValue !== 'boolean') throw new Malformed();

  return {
    requestPackageName: string(own(request, 'requestPackageName')),
    ...optionalString(request, 'nonce'),
    ...optionalString(request, 'requestHash'),
    timestampMillis: int64(own(request, 'timestampMillis')),
    appRecognitionVerdict,
    ...(appRecognitionVerdict === 'UNEVALUATED'
      ? {}
      : {
          app: {
            packageName: string(own(app, 'packageName')),
            signerDigestsHex: list(own(app, 'certificateSha256Digest')).map(digestHex),
            versionCode: int64(own(app, 'versionCode')),
          },
        }),
    deviceLabels: labelsValue === undefined ? [] : list(labelsValue).map(string),
    isTestingResponse: isTestingValue === true,
  };
}

function own(obj: Json, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(obj, key) ? obj[key] : undefined;
}

function object(value: unknown): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Malformed();
  return value as Json;
}

function string(value: unknown): string {
  if (typeof value !== 'string') throw new Malformed();
  return value;
}

function optionalString(obj: Json, key: 'nonce' | 'requestHash'): { nonce?: string } | { requestHash?: string } {
  const value = own(obj, key);
  if (value === undefined) return {};
  return key === 'nonce' ? { nonce: string(value) } : { requestHash: string(value) };
}

function list(value: unknown): unknown[] {
  if (!Array.isArray(value) || value.length > MAX_LIST) throw new Malformed();
  return value;
}

/**
 * An int64 as Google's JSON writes it: a decimal string. A JSON integer is read too, because the proto3 JSON mapping
 * that Google's payloads follow accepts either form for int64; anything else ("0x2A", "4.2e1", " 42", -1) is refused.
 */
function int64(value: unknown): number {
  if (typeof value === 'string' && DECIMAL.test(value)) {
    const n = Number(value);
    if (Number.isSafeInteger(n)) return n;
  }
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  throw new Malformed();
}

/** A certificateSha256Digest entry as lowercase hex, the form the signers registry records. */
function digestHex(value: unknown): string {
  const text = string(value);
  if (!DIGEST.test(text)) throw new Malformed();
  const bytes = strictBase64url(text.endsWith('=') ? text.slice(0, -1) : text);
  if (!bytes || bytes.length !== 32) throw new Malformed();
  return bytes.toString('hex');
}
