// Fuzz target of the Play Integrity engine (src/attest/play-integrity): untrusted bytes as the three things an
// attacker controls or a defect could produce. (1) The token text a device sends. (2) A decoded verdict, as a standard
// decoder would hand it over. (3) The verdict bytes inside a token that decrypts and verifies, so the payload reader
// is reached through both cryptographic layers, as only Google (or a leaked key) could. Every answer must be well
// formed: known reasons, each once, `token_malformed` alone, a safe versionCode. The engine must never throw; this
// target throws only when it does or when an answer breaks those rules, which the harness reports as a crash.
import { ATTEST_REASONS, type AttestReason } from '../../src/attest/reasons';
import { checkIntegrityPayload, parsePlayIntegrityKeys, verifyPlayIntegrity, type IntegrityExpectations, type PlayIntegrityKeys } from '../../src/attest/play-integrity';
import { CLASSIC_DEFAULTS, classicVerdict, mintClassicToken, playIntegrityKeys, type PlayIntegrityTestKeys } from '../support/play-integrity-tokens';

/** A fixed clock and fixed keys, so an input found in one run means the same in the next, in any process. */
const NOW = new Date('2026-01-15T12:00:00Z');
const KEY_SEED = 'shieldgate fuzz play-integrity';
/** Above it, minting (3) is skipped: the engine refuses such a payload on size alone, and minting is the slow part. */
const MAX_MINTED_PAYLOAD = 9000;

const EXPECT: IntegrityExpectations = {
  packageName: CLASSIC_DEFAULTS.packageName,
  nonce: CLASSIC_DEFAULTS.nonce,
  recordedSigners: [CLASSIC_DEFAULTS.signerSha256Hex],
  minDeviceIntegrity: 'MEETS_DEVICE_INTEGRITY',
  now: NOW,
};

let fixture: { test: PlayIntegrityTestKeys; keys: PlayIntegrityKeys } | null = null;
function keys(): { test: PlayIntegrityTestKeys; keys: PlayIntegrityKeys } {
  if (!fixture) {
    const test = playIntegrityKeys(KEY_SEED);
    const parsed = parsePlayIntegrityKeys(test.config);
    if (!parsed.keys) throw new Error(`fixture keys do not parse: ${JSON.stringify(parsed.errors)}`);
    fixture = { test, keys: parsed.keys };
  }
  return fixture;
}

export async function fuzzPlayIntegrity(input: Buffer): Promise<void> {
  const { test, keys: appKeys } = keys();
  const text = input.toString('utf8');

  assertAnswer('token', await verifyPlayIntegrity({ token: text, keys: appKeys, ...EXPECT }));

  let parsed: unknown;
  let isJson = true;
  try {
    parsed = JSON.parse(text);
  } catch {
    isJson = false; // not JSON: nothing for a decoder to hand over
  }
  if (isJson) {
    assertAnswer('payload', checkIntegrityPayload(parsed, EXPECT));
    assertAnswer('payload (standard)', checkIntegrityPayload(parsed, { ...EXPECT, requestHash: CLASSIC_DEFAULTS.nonce }));
  }

  if (input.length <= MAX_MINTED_PAYLOAD) {
    const token = await mintClassicToken(test, {}, { rawPayload: new Uint8Array(input) });
    assertAnswer('minted', await verifyPlayIntegrity({ token, keys: appKeys, ...EXPECT }));
  }
}

const KNOWN: ReadonlySet<string> = new Set(ATTEST_REASONS);

function assertAnswer(path: string, answer: { reasons: AttestReason[]; versionCode?: number }): void {
  const { reasons, versionCode } = answer;
  if (!Array.isArray(reasons)) throw new Error(`${path}: reasons is not a list`);
  const unknown = reasons.filter((r) => !KNOWN.has(r));
  if (unknown.length > 0) throw new Error(`${path}: unknown reasons ${unknown.join(', ')}`);
  if (new Set(reasons).size !== reasons.length) throw new Error(`${path}: a reason given twice: ${reasons.join(', ')}`);
  if (reasons.includes('token_malformed') && reasons.length !== 1) throw new Error(`${path}: token_malformed with others: ${reasons.join(', ')}`);
  if (versionCode !== undefined && !(Number.isSafeInteger(versionCode) && versionCode >= 0)) throw new Error(`${path}: versionCode ${versionCode}`);
}

/** Seeds: a genuine verdict and its token, and the verdict shapes the checks branch on. */
export async function playIntegritySeeds(): Promise<Buffer[]> {
  const { test } = keys();
  const genuine = classicVerdict(NOW);
  const variants: Record<string, unknown>[] = [
    genuine,
    { ...genuine, appIntegrity: { appRecognitionVerdict: 'UNEVALUATED' }, deviceIntegrity: {} },
    { ...genuine, requestDetails: { requestPackageName: CLASSIC_DEFAULTS.packageName, timestampMillis: String(NOW.getTime()), requestHash: CLASSIC_DEFAULTS.nonce } },
    { ...genuine, testingDetails: { isTestingResponse: true } },
  ];
  const token = await mintClassicToken(test, {}, { now: NOW });
  return [...variants.map((v) => Buffer.from(JSON.stringify(v))), Buffer.from(token)];
}
