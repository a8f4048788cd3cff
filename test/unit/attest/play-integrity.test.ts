// Protects: the Play Integrity engine (src/attest/play-integrity). A genuine classic token, minted in Google's exact
// shapes (test/support/play-integrity-tokens.ts), verifies with no reason and gives its versionCode; each check fires
// its own reason on its own mutation (package, nonce, time either way, app recognition, signer, device level, test
// response); a token Google would not make is refused for the layer that is wrong (shape: token_malformed; JWE
// algorithms or key: decrypt_failed; JWS algorithm or key: signature_invalid), never with a throw; the configured
// keys parse only as Play Console gives them, and a refusal never quotes the key; a standard request's verdict,
// decoded elsewhere, gets the same reasons as the same verdict in a classic token.
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { CompactSign, compactDecrypt, decodeProtectedHeader } from 'jose';
import {
  checkIntegrityPayload,
  parsePlayIntegrityKeys,
  verifyPlayIntegrity,
  type DeviceIntegrityLevel,
  type IntegrityExpectations,
  type PlayIntegrityKeys,
} from '../../../src/attest/play-integrity';
import {
  CLASSIC_DEFAULTS,
  classicVerdict,
  encryptClassic,
  fakeStandardDecoder,
  merge,
  mintClassicToken,
  playIntegrityKeys,
  signerDigest,
  type MintOptions,
  type PlayIntegrityTestKeys,
  type VerdictOverrides,
} from '../../support/play-integrity-tokens';

const NOW = new Date('2026-11-29T10:00:00Z');
const MINUTE = 60_000;
const OTHER_SIGNER = createHash('sha256').update('a stranger').digest('hex');

let app: PlayIntegrityTestKeys;
let keys: PlayIntegrityKeys;
beforeAll(() => {
  app = playIntegrityKeys();
  const parsed = parsePlayIntegrityKeys(app.config);
  expect(parsed.errors).toEqual([]);
  keys = parsed.keys!;
});

const expectations = (over: Partial<IntegrityExpectations> = {}): IntegrityExpectations => ({
  packageName: CLASSIC_DEFAULTS.packageName,
  nonce: CLASSIC_DEFAULTS.nonce,
  recordedSigners: [CLASSIC_DEFAULTS.signerSha256Hex],
  minDeviceIntegrity: 'MEETS_DEVICE_INTEGRITY',
  now: NOW,
  ...over,
});
const mint = (overrides: VerdictOverrides = {}, options: MintOptions = {}) => mintClassicToken(app, overrides, { now: NOW, ...options });
const verify = (token: string, over: Partial<IntegrityExpectations> = {}) => verifyPlayIntegrity({ token, keys, ...expectations(over) });
const b64url = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

describe('a genuine classic token', () => {
  it('verifies with no reason and gives the versionCode', async () => {
    expect(await verify(await mint())).toEqual({ reasons: [], versionCode: CLASSIC_DEFAULTS.versionCode });
  });

  it('is nested exactly as Google nests it: JWE {alg A256KW, enc A256GCM} of JWS {alg ES256} of the verdict', async () => {
    const token = await mint();
    expect(token.split('.')).toHaveLength(5);
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'A256KW', enc: 'A256GCM' });
    const jws = new TextDecoder().decode((await compactDecrypt(token, app.aesKey)).plaintext);
    expect(jws.split('.')).toHaveLength(3);
    expect(decodeProtectedHeader(jws)).toEqual({ alg: 'ES256' });
    const verdict = JSON.parse(Buffer.from(jws.split('.')[1], 'base64url').toString('utf8'));
    expect(verdict).toEqual(classicVerdict(NOW));
    // Strings where Google sends strings; digests as unpadded base64url.
    expect(verdict.requestDetails.timestampMillis).toBe(String(NOW.getTime()));
    expect(verdict.appIntegrity.versionCode).toBe('42');
    expect(verdict.appIntegrity.certificateSha256Digest).toEqual([expect.stringMatching(/^[A-Za-z0-9_-]{43}$/)]);
    expect(token.length).toBeLessThan(1500);
  });

  it('verifies at the edge of the size limit, and not a character past it', async () => {
    // Opt-in sections Google may add make tokens longer; fill one until the token is as long as the spec allows.
    const sized = (filler: number) => mint({ environmentDetails: { playProtectVerdict: 'NO_ISSUES', note: 'x'.repeat(filler) } });
    let [fits, over] = [0, 8192];
    while (over - fits > 1) {
      const mid = Math.floor((fits + over) / 2);
      if ((await sized(mid)).length <= 8192) fits = mid;
      else over = mid;
    }
    const longest = await sized(fits);
    expect(longest.length).toBeGreaterThan(8185);
    expect((await verify(longest)).reasons).toEqual([]);
    expect((await sized(over)).length).toBeGreaterThan(8192);
    expect(await verify(await sized(over))).toEqual({ reasons: ['token_malformed'] });
  });
});

describe('each check fires its reason on its mutation', () => {
  const rd = (fields: Record<string, unknown>) => ({ requestDetails: fields });
  const ai = (fields: Record<string, unknown>) => ({ appIntegrity: fields });
  const labels = (list: string[] | undefined) => ({ deviceIntegrity: { deviceRecognitionVerdict: list } });

  it.each<[string, VerdictOverrides, Partial<IntegrityExpectations>, string[]]>([
    ['another requestPackageName', rd({ requestPackageName: 'com.evil.app' }), {}, ['package_mismatch']],
    ['another appIntegrity.packageName', ai({ packageName: 'com.evil.app' }), {}, ['package_mismatch']],
    ['both package names another', { ...rd({ requestPackageName: 'com.evil' }), ...ai({ packageName: 'com.evil' }) }, {}, ['package_mismatch']],
    ['the token attests another nonce', rd({ nonce: b64url(randomBytes(32)) }), {}, ['challenge_mismatch']],
    ['the request carries another nonce', {}, { nonce: b64url(randomBytes(32)) }, ['challenge_mismatch']],
    ['no nonce in the token', rd({ nonce: undefined }), {}, ['challenge_mismatch']],
    ['the nonce with a character Node would skip', rd({ nonce: `${CLASSIC_DEFAULTS.nonce}$` }), {}, ['challenge_mismatch']],
    ['the nonce spelled in standard base64', rd({ nonce: 'a+b/' + CLASSIC_DEFAULTS.nonce.slice(4) }), { nonce: 'a-b_' + CLASSIC_DEFAULTS.nonce.slice(4) }, ['challenge_mismatch']],
    ['a request nonce that is not base64url', rd({ nonce: 'not base64url!' }), { nonce: 'not base64url!' }, ['challenge_mismatch']],
    ['6 minutes old', rd({ timestampMillis: String(NOW.getTime() - 6 * MINUTE) }), {}, ['timestamp_stale']],
    ['6 minutes ahead', rd({ timestampMillis: String(NOW.getTime() + 6 * MINUTE) }), {}, ['timestamp_stale']],
    ['5 minutes and 1 ms old', rd({ timestampMillis: String(NOW.getTime() - 5 * MINUTE - 1) }), {}, ['timestamp_stale']],
    ['an app Play does not recognize', ai({ appRecognitionVerdict: 'UNRECOGNIZED_VERSION' }), {}, ['app_unrecognized']],
    ['a clone signed by a stranger', ai({ certificateSha256Digest: [signerDigest(OTHER_SIGNER)] }), {}, ['signer_mismatch']],
    ['no signing certificate at all', ai({ certificateSha256Digest: [] }), {}, ['signer_mismatch']],
    ['no signer recorded (null)', {}, { recordedSigners: null }, ['signer_unrecorded']],
    ['no signer recorded (empty)', {}, { recordedSigners: [] }, ['signer_unrecorded']],
    ['BASIC only, DEVICE required', labels(['MEETS_BASIC_INTEGRITY']), {}, ['device_integrity_low']],
    ['BASIC and DEVICE, STRONG required', labels(['MEETS_BASIC_INTEGRITY', 'MEETS_DEVICE_INTEGRITY']), { minDeviceIntegrity: 'MEETS_STRONG_INTEGRITY' }, ['device_integrity_low']],
    ['an empty label list', labels([]), {}, ['device_integrity_low']],
    ['no label list (no integrity)', { deviceIntegrity: { deviceRecognitionVerdict: undefined } }, {}, ['device_integrity_low']],
    ['no deviceIntegrity at all', { deviceIntegrity: undefined }, { minDeviceIntegrity: 'MEETS_BASIC_INTEGRITY' }, ['device_integrity_low']],
    ['an emulator (virtual integrity only)', labels(['MEETS_VIRTUAL_INTEGRITY']), { minDeviceIntegrity: 'MEETS_BASIC_INTEGRITY' }, ['device_integrity_low']],
    ['a minimum that is not a level asks for the strongest', {}, { minDeviceIntegrity: 'MEETS_ANY' as DeviceIntegrityLevel }, ['device_integrity_low']],
    ['a Play Console test response', { testingDetails: { isTestingResponse: true } }, {}, ['test_response']],
  ])('%s', async (_name, overrides, over, reasons) => {
    expect((await verify(await mint(overrides), over)).reasons).toEqual(reasons);
  });

  it.each<[string, VerdictOverrides, Partial<IntegrityExpectations>]>([
    ['exactly 5 minutes old', rd({ timestampMillis: String(NOW.getTime() - 5 * MINUTE) }), {}],
    ['exactly 5 minutes ahead', rd({ timestampMillis: String(NOW.getTime() + 5 * MINUTE) }), {}],
    ['the nonce echoed with padding', rd({ nonce: `${CLASSIC_DEFAULTS.nonce}=` }), {}],
    ['a second signing certificate beside the recorded one (rotation)', ai({ certificateSha256Digest: [signerDigest(OTHER_SIGNER), signerDigest(CLASSIC_DEFAULTS.signerSha256Hex)] }), {}],
    ['the recorded signer among others', {}, { recordedSigners: [OTHER_SIGNER, CLASSIC_DEFAULTS.signerSha256Hex] }],
    ['all three levels, STRONG required', labels(['MEETS_BASIC_INTEGRITY', 'MEETS_DEVICE_INTEGRITY', 'MEETS_STRONG_INTEGRITY']), { minDeviceIntegrity: 'MEETS_STRONG_INTEGRITY' }],
    ['STRONG alone, DEVICE required (at or above)', labels(['MEETS_STRONG_INTEGRITY']), {}],
    ['BASIC only, BASIC required', labels(['MEETS_BASIC_INTEGRITY']), { minDeviceIntegrity: 'MEETS_BASIC_INTEGRITY' }],
    ['not a test response', { testingDetails: { isTestingResponse: false } }, {}],
    ['an unlicensed user (not checked)', { accountDetails: { appLicensingVerdict: 'UNLICENSED' } }, {}],
    ['timestampMillis and versionCode as JSON numbers', { ...rd({ timestampMillis: NOW.getTime() }), ...ai({ versionCode: 42 }) }, {}],
    ['a padded digest', ai({ certificateSha256Digest: [`${signerDigest(CLASSIC_DEFAULTS.signerSha256Hex)}=`] }), {}],
  ])('passes: %s', async (_name, overrides, over) => {
    expect(await verify(await mint(overrides), over)).toEqual({ reasons: [], versionCode: 42 });
  });

  it('an unevaluated app gives app_unrecognized alone, and no versionCode (Google sends none)', async () => {
    expect(await verify(await mint({ appIntegrity: { appRecognitionVerdict: 'UNEVALUATED' } }))).toEqual({ reasons: ['app_unrecognized'] });
  });

  it('a device below the minimum integrity names no build: what it says of the app was gathered on it', async () => {
    expect(await verify(await mint(labels(['MEETS_BASIC_INTEGRITY'])))).toEqual({ reasons: ['device_integrity_low'] });
    expect(await verify(await mint(labels(['MEETS_BASIC_INTEGRITY'])), { minDeviceIntegrity: 'MEETS_BASIC_INTEGRITY' })).toEqual({ reasons: [], versionCode: CLASSIC_DEFAULTS.versionCode });
  });

  it('an unrecognized version still gives its versionCode, and its signer is still checked', async () => {
    const token = await mint(ai({ appRecognitionVerdict: 'UNRECOGNIZED_VERSION', versionCode: '7', certificateSha256Digest: [signerDigest(OTHER_SIGNER)] }));
    expect(await verify(token)).toEqual({ reasons: ['app_unrecognized', 'signer_mismatch'], versionCode: 7 });
  });

  it('lists every reason that fired, once each, in the order checked', async () => {
    const token = await mint({
      ...rd({ requestPackageName: 'com.evil', nonce: b64url('other nonce, 16+'), timestampMillis: String(NOW.getTime() - 60 * MINUTE) }),
      ...ai({ packageName: 'com.evil', certificateSha256Digest: [signerDigest(OTHER_SIGNER)], appRecognitionVerdict: 'UNRECOGNIZED_VERSION' }),
      ...labels(['MEETS_BASIC_INTEGRITY']),
      testingDetails: { isTestingResponse: true },
    });
    expect((await verify(token)).reasons).toEqual([
      'package_mismatch', 'challenge_mismatch', 'timestamp_stale', 'app_unrecognized', 'signer_mismatch', 'device_integrity_low', 'test_response',
    ]);
  });
});

describe('a token Google would not make is refused for the layer that is wrong', () => {
  /** The token with its JWE protected header replaced (the rest untouched). */
  const withJweHeader = (token: string, header: unknown) => [b64url(header), ...token.split('.').slice(1)].join('.');

  it.each<[string, () => Promise<string>]>([
    ['encrypted with another app key', () => mint({}, { encryptWith: new Uint8Array(randomBytes(32)) })],
    ['a ciphertext byte flipped', async () => {
      const parts = (await mint()).split('.');
      const bytes = Buffer.from(parts[3], 'base64url');
      bytes[0] ^= 1;
      parts[3] = bytes.toString('base64url');
      return parts.join('.');
    }],
    ['a tag byte flipped', async () => {
      const parts = (await mint()).split('.');
      const bytes = Buffer.from(parts[4], 'base64url');
      bytes[15] ^= 0x80;
      parts[4] = bytes.toString('base64url');
      return parts.join('.');
    }],
    ['the tag cut to 4 bytes', async () => {
      const parts = (await mint()).split('.');
      parts[4] = Buffer.from(parts[4], 'base64url').subarray(0, 4).toString('base64url');
      return parts.join('.');
    }],
    ['no wrapped key', async () => { const p = (await mint()).split('.'); p[1] = ''; return p.join('.'); }],
    ['JWE alg none', async () => withJweHeader(await mint(), { alg: 'none', enc: 'A256GCM' })],
    ['JWE alg HS256', async () => withJweHeader(await mint(), { alg: 'HS256', enc: 'A256GCM' })],
    ['JWE without enc', async () => withJweHeader(await mint(), { alg: 'A256KW' })],
    ['JWE dir + A128GCM (a content key used directly)', async () => {
      const jws = await new CompactSign(new TextEncoder().encode(JSON.stringify(classicVerdict(NOW)))).setProtectedHeader({ alg: 'ES256' }).sign(app.signingKey);
      return encryptClassic(jws, new Uint8Array(randomBytes(16)), { alg: 'dir', enc: 'A128GCM' });
    }],
    ['JWE A128KW + A256GCM', () => mint({}, { encryptWith: app.aesKey.subarray(0, 16), jweHeader: { alg: 'A128KW', enc: 'A256GCM' } })],
    ['JWE A256KW + A128GCM', () => mint({}, { jweHeader: { alg: 'A256KW', enc: 'A128GCM' } })],
    ['JWE A256KW + A256CBC-HS512', () => mint({}, { jweHeader: { alg: 'A256KW', enc: 'A256CBC-HS512' } })],
  ])('decrypt_failed: %s', async (_name, token) => {
    expect(await verify(await token())).toEqual({ reasons: ['decrypt_failed'] });
  });

  it.each<[string, () => Promise<string>]>([
    ['signed by another key', () => mint({}, { signWith: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey })],
    ['JWS alg none (no signature)', async () => {
      const unsigned = `${b64url({ alg: 'none' })}.${b64url(classicVerdict(NOW))}.`;
      return encryptClassic(unsigned, app.aesKey);
    }],
    ['JWS HS256 with a guessed secret', () => mint({}, { jwsHeader: { alg: 'HS256' }, signWith: new Uint8Array(32) })],
    ['JWS HS256 keyed with the public key bytes', () => mint({}, { jwsHeader: { alg: 'HS256' }, signWith: new Uint8Array(Buffer.from(app.config.verificationKey, 'base64')) })],
    ['JWS ES384', () => mint({}, { jwsHeader: { alg: 'ES384' }, signWith: generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey })],
    ['JWS ES256 header on another signature', async () => {
      const jws = (await new CompactSign(new TextEncoder().encode(JSON.stringify(classicVerdict(NOW)))).setProtectedHeader({ alg: 'ES256' }).sign(app.signingKey)).split('.');
      const sig = Buffer.from(jws[2], 'base64url');
      sig[10] ^= 1;
      return encryptClassic([jws[0], jws[1], sig.toString('base64url')].join('.'), app.aesKey);
    }],
    ['the payload swapped under a genuine signature', async () => {
      const jws = (await new CompactSign(new TextEncoder().encode(JSON.stringify(classicVerdict(NOW)))).setProtectedHeader({ alg: 'ES256' }).sign(app.signingKey)).split('.');
      const forged = merge(classicVerdict(NOW), { deviceIntegrity: { deviceRecognitionVerdict: ['MEETS_STRONG_INTEGRITY'] } });
      return encryptClassic([jws[0], b64url(forged), jws[2]].join('.'), app.aesKey);
    }],
  ])('signature_invalid: %s', async (_name, token) => {
    expect(await verify(await token())).toEqual({ reasons: ['signature_invalid'] });
  });

  it.each<[string, () => Promise<string> | string]>([
    ['a JWS instead of a JWE', async () => (await new CompactSign(new TextEncoder().encode(JSON.stringify(classicVerdict(NOW)))).setProtectedHeader({ alg: 'ES256' }).sign(app.signingKey))],
    ['four parts', async () => (await mint()).split('.').slice(0, 4).join('.')],
    ['six parts', async () => `${await mint()}.AAAA`],
    ['an empty string', () => ''],
    ['five empty parts', () => '....'],
    ['an empty ciphertext', async () => { const p = (await mint()).split('.'); p[3] = ''; return p.join('.'); }],
    ['5 parts, one with a character outside base64url', async () => (await mint()).replace(/\.(.)/, '.$$$1')],
    ['5 parts, one in standard base64 (+)', async () => { const p = (await mint()).split('.'); p[2] = `+${p[2].slice(1)}`; return p.join('.'); }],
    ['5 parts, one with padding', async () => { const p = (await mint()).split('.'); p[3] = `${p[3]}=`; return p.join('.'); }],
    ['5 parts, one not canonical base64url (unused bits set)', async () => {
      // The tag is 16 bytes: its last character carries 4 unused bits, which a canonical encoding leaves at zero.
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      const p = (await mint()).split('.');
      p[4] = p[4].slice(0, -1) + alphabet[alphabet.indexOf(p[4].slice(-1)) ^ 1];
      return p.join('.');
    }],
    ['5 parts with whitespace', async () => ` ${await mint()}`],
    ['a JWE header that is not JSON', async () => [b64url('not json'), ...(await mint()).split('.').slice(1)].join('.')],
    ['a JWE header that is a JSON array', async () => [b64url(['A256KW']), ...(await mint()).split('.').slice(1)].join('.')],
    ['9,000 characters', () => 'A'.repeat(9000)],
    ['an oversized token of five valid parts', () => ['AAAA', 'AAAA', 'AAAA', 'A'.repeat(8180), 'AAAA'].join('.')],
    ['plaintext that is not a JWS', () => encryptClassic('hello, not a JWS', app.aesKey)],
    ['plaintext that is a JWS of four parts', () => encryptClassic('a.b.c.d', app.aesKey)],
    ['a verdict that is not JSON', () => mint({}, { rawPayload: 'not json' })],
    ['a verdict that is not UTF-8', () => mint({}, { rawPayload: new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]) })],
    ['a verdict that is a JSON array', () => mint({}, { rawPayload: '[]' })],
    ['a verdict over 8 KB', () => mint({}, { rawPayload: JSON.stringify({ ...classicVerdict(NOW), pad: 'x'.repeat(8200) }) })],
  ])('token_malformed: %s', async (_name, token) => {
    expect(await verify(await token())).toEqual({ reasons: ['token_malformed'] });
  });

  it.each<[string, VerdictOverrides]>([
    ['no requestDetails', { requestDetails: undefined }],
    ['no appIntegrity', { appIntegrity: undefined }],
    ['no requestPackageName', { requestDetails: { requestPackageName: undefined } }],
    ['no timestampMillis', { requestDetails: { timestampMillis: undefined } }],
    ['timestampMillis in scientific notation', { requestDetails: { timestampMillis: '1.7e12' } }],
    ['timestampMillis negative', { requestDetails: { timestampMillis: -1 } }],
    ['a nonce that is not a string', { requestDetails: { nonce: 42 } }],
    ['versionCode in hex', { appIntegrity: { versionCode: '0x2A' } }],
    ['versionCode with trailing text', { appIntegrity: { versionCode: '42abc' } }],
    ['versionCode negative', { appIntegrity: { versionCode: '-1' } }],
    ['versionCode with a space', { appIntegrity: { versionCode: ' 42' } }],
    ['versionCode fractional', { appIntegrity: { versionCode: 4.2 } }],
    ['versionCode past 2^53', { appIntegrity: { versionCode: '9007199254740993' } }],
    ['no versionCode on a recognized app', { appIntegrity: { versionCode: undefined } }],
    ['no packageName on a recognized app', { appIntegrity: { packageName: undefined } }],
    ['no digests on a recognized app', { appIntegrity: { certificateSha256Digest: undefined } }],
    ['a digest in hex', { appIntegrity: { certificateSha256Digest: [CLASSIC_DEFAULTS.signerSha256Hex] } }],
    ['a digest of 31 bytes', { appIntegrity: { certificateSha256Digest: [Buffer.alloc(31).toString('base64url')] } }],
    ['digests not a list', { appIntegrity: { certificateSha256Digest: signerDigest(CLASSIC_DEFAULTS.signerSha256Hex) } }],
    ['65 digests', { appIntegrity: { certificateSha256Digest: Array(65).fill(signerDigest(CLASSIC_DEFAULTS.signerSha256Hex)) } }],
    ['no appRecognitionVerdict', { appIntegrity: { appRecognitionVerdict: undefined } }],
    ['device labels not a list', { deviceIntegrity: { deviceRecognitionVerdict: 'MEETS_DEVICE_INTEGRITY' } }],
    ['a device label that is not a string', { deviceIntegrity: { deviceRecognitionVerdict: [2] } }],
    ['deviceIntegrity a list', { deviceIntegrity: ['MEETS_DEVICE_INTEGRITY'] }],
    ['isTestingResponse as text', { testingDetails: { isTestingResponse: 'true' } }],
    ['testingDetails not an object', { testingDetails: true }],
  ])('token_malformed, a verdict not in Google\'s documented shape: %s', async (_name, overrides) => {
    expect(await verify(await mint(overrides))).toEqual({ reasons: ['token_malformed'] });
  });
});

describe('never throws, and __proto__ means nothing', () => {
  it('reads own fields only: a verdict hidden under __proto__ is not the verdict', async () => {
    const verdict = JSON.stringify(classicVerdict(NOW));
    // appRecognitionVerdict only under __proto__: absent, so malformed (not PLAY_RECOGNIZED read through the prototype).
    const hidden = verdict.replace('"appRecognitionVerdict":"PLAY_RECOGNIZED"', '"__proto__":{"appRecognitionVerdict":"PLAY_RECOGNIZED"}');
    expect(hidden).not.toBe(verdict);
    expect(await verify(await mint({}, { rawPayload: hidden }))).toEqual({ reasons: ['token_malformed'] });
    // A test response that tries to hide under a __proto__ that says otherwise.
    const testing = `${verdict.slice(0, -1)},"testingDetails":{"__proto__":{"isTestingResponse":false},"isTestingResponse":true}}`;
    expect((await verify(await mint({}, { rawPayload: testing }))).reasons).toEqual(['test_response']);
    // A top-level __proto__ carrying a whole verdict is not one.
    expect(await verify(await mint({}, { rawPayload: JSON.stringify({ ['__proto__']: classicVerdict(NOW) }) }))).toEqual({ reasons: ['token_malformed'] });
    expect(({} as Record<string, unknown>).isTestingResponse).toBeUndefined();
    expect(({} as Record<string, unknown>).appRecognitionVerdict).toBeUndefined();
  });

  it('answers, never throws, on inputs no caller should send', async () => {
    const token = await mint();
    expect(await verifyPlayIntegrity({ token: 42 as unknown as string, keys, ...expectations() })).toEqual({ reasons: ['token_malformed'] });
    expect(await verifyPlayIntegrity({ token: null as unknown as string, keys, ...expectations() })).toEqual({ reasons: ['token_malformed'] });
    const badKeys = { decryptionKey: new Uint8Array(3), verificationKey: keys.verificationKey };
    expect(await verifyPlayIntegrity({ token, keys: badKeys, ...expectations() })).toEqual({ reasons: ['decrypt_failed'] });
    const noVerifier = { decryptionKey: keys.decryptionKey, verificationKey: null as unknown as PlayIntegrityKeys['verificationKey'] };
    expect(await verifyPlayIntegrity({ token, keys: noVerifier, ...expectations() })).toEqual({ reasons: ['signature_invalid'] });
    expect(await verifyPlayIntegrity({ token, keys: null as unknown as PlayIntegrityKeys, ...expectations() })).toEqual({ reasons: ['decrypt_failed'] });
    expect((await verify(token, { now: new Date(NaN) })).reasons).toEqual(['timestamp_stale']);
    expect((await verify(token, { recordedSigners: 'abc' as unknown as string[] })).reasons).toEqual(['signer_unrecorded']);
    expect((await verify(token, { nonce: undefined as unknown as string })).reasons).toEqual(['challenge_mismatch']);
  });

  it('checkIntegrityPayload answers token_malformed for values that are not verdicts, throwing getters included', () => {
    const throwing = new Proxy({}, { get: () => { throw new Error('trap'); }, has: () => { throw new Error('trap'); }, getOwnPropertyDescriptor: () => { throw new Error('trap'); } });
    const getter = { get requestDetails(): unknown { throw new Error('getter'); } };
    for (const value of [undefined, null, 0, 'verdict', [], [classicVerdict(NOW)], throwing, getter, Object.create(classicVerdict(NOW))]) {
      expect(checkIntegrityPayload(value, expectations())).toEqual({ reasons: ['token_malformed'] });
    }
  });
});

describe('parsePlayIntegrityKeys', () => {
  const DECRYPTION = '/android/playIntegrity/decryptionKey';
  const VERIFICATION = '/android/playIntegrity/verificationKey';

  it('reads the keys as Play Console gives them', () => {
    const { keys: parsed, errors } = parsePlayIntegrityKeys(app.config);
    expect(errors).toEqual([]);
    expect(Buffer.from(parsed!.decryptionKey)).toEqual(Buffer.from(app.aesKey));
    expect(parsed!.verificationKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    expect(app.config.decryptionKey).toHaveLength(44);
    expect(app.config.verificationKey).toHaveLength(124);
  });

  const aes = (bytes: Buffer) => bytes.toString('base64');
  const spki = (key: { export(o: { type: 'spki'; format: 'der' }): Buffer }) => key.export({ type: 'spki', format: 'der' });
  const goodSpki = () => Buffer.from(app.config.verificationKey, 'base64');

  it.each<[string, () => unknown]>([
    ['a 16-byte key', () => aes(randomBytes(16))],
    ['a 33-byte key', () => aes(randomBytes(33))],
    ['the key in base64url', () => aes(Buffer.from([0xfb, 0xff, ...randomBytes(30)])).replace(/\+/g, '-').replace(/\//g, '_')],
    ['the key without its padding', () => aes(randomBytes(32)).replace(/=+$/, '')],
    ['the key with a newline', () => `${aes(randomBytes(32))}\n`],
    ['the key with a space inside', () => { const t = aes(randomBytes(32)); return `${t.slice(0, 20)} ${t.slice(20)}`; }],
    ['an empty text', () => ''],
    ['not text', () => 42],
    ['a megabyte of base64', () => 'A'.repeat(1 << 20)],
  ])('refuses the decryption key: %s', (_name, value) => {
    const text = value();
    const { keys: parsed, errors } = parsePlayIntegrityKeys({ decryptionKey: text as string, verificationKey: app.config.verificationKey });
    expect(parsed).toBeUndefined();
    expect(errors).toEqual([{ pointer: DECRYPTION, message: expect.any(String) }]);
    if (typeof text === 'string' && text.trim().length >= 8) expect(errors[0].message).not.toContain(text.trim().slice(0, 8));
  });

  it.each<[string, () => unknown]>([
    ['a P-384 key', () => spki(generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey).toString('base64')],
    ['a secp256k1 key', () => spki(generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).publicKey).toString('base64')],
    ['an RSA key', () => spki(generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey).toString('base64')],
    ['an Ed25519 key', () => spki(generateKeyPairSync('ed25519').publicKey).toString('base64')],
    ['the private key (PKCS#8)', () => app.signingKey.export({ type: 'pkcs8', format: 'der' }).toString('base64')],
    ['the key with a byte after it', () => Buffer.concat([goodSpki(), Buffer.from([0])]).toString('base64')],
    ['the key cut short', () => goodSpki().subarray(0, 80).toString('base64')],
    ['the key as PEM', () => app.verificationKey.export({ type: 'spki', format: 'pem' }) as string],
    ['the key in base64url', () => goodSpki().toString('base64url')],
    ['the AES key', () => app.config.decryptionKey],
    ['random bytes', () => randomBytes(91).toString('base64')],
    ['not text', () => ({ key: app.config.verificationKey })],
  ])('refuses the verification key: %s', (_name, value) => {
    const text = value();
    const { keys: parsed, errors } = parsePlayIntegrityKeys({ decryptionKey: app.config.decryptionKey, verificationKey: text as string });
    expect(parsed).toBeUndefined();
    expect(errors).toEqual([{ pointer: VERIFICATION, message: expect.any(String) }]);
    if (typeof text === 'string') expect(errors[0].message).not.toContain(text.replace(/-----[^-]+-----|\s/g, '').slice(0, 8));
  });

  it('names both fields when both are wrong, and quotes neither', () => {
    const input = { decryptionKey: aes(randomBytes(31)), verificationKey: 'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE' };
    const { keys: parsed, errors } = parsePlayIntegrityKeys(input);
    expect(parsed).toBeUndefined();
    expect(errors.map((e) => e.pointer)).toEqual([DECRYPTION, VERIFICATION]);
    const said = JSON.stringify(errors);
    for (const text of Object.values(input)) expect(said).not.toContain(text.slice(0, 8));
  });

  it('never throws on input that is not the two texts', () => {
    for (const input of [undefined, null, {}, 'keys', []]) {
      const { keys: parsed, errors } = parsePlayIntegrityKeys(input as unknown as { decryptionKey: string; verificationKey: string });
      expect(parsed).toBeUndefined();
      expect(errors.map((e) => e.pointer)).toEqual([DECRYPTION, VERIFICATION]);
    }
  });
});

describe('standard requests: the verdict a decoder returns gets the classic checks', () => {
  const variants: [string, VerdictOverrides][] = [
    ['genuine', {}],
    ['another package', { requestDetails: { requestPackageName: 'com.evil' } }],
    ['another nonce', { requestDetails: { nonce: b64url('another nonce, sixteen') } }],
    ['stale', { requestDetails: { timestampMillis: String(NOW.getTime() - 10 * MINUTE) } }],
    ['unevaluated', { appIntegrity: { appRecognitionVerdict: 'UNEVALUATED', packageName: undefined, certificateSha256Digest: undefined, versionCode: undefined } }],
    ['another signer', { appIntegrity: { certificateSha256Digest: [signerDigest(OTHER_SIGNER)] } }],
    ['basic device', { deviceIntegrity: { deviceRecognitionVerdict: ['MEETS_BASIC_INTEGRITY'] } }],
    ['test response', { testingDetails: { isTestingResponse: true } }],
    ['malformed', { appIntegrity: { versionCode: 'forty-two' } }],
  ];

  it.each(variants)('%s: same reasons and versionCode as the classic token', async (_name, overrides) => {
    const verdict = merge(classicVerdict(NOW), overrides);
    const decoder = fakeStandardDecoder(new Map([['standard-token', verdict]]));
    const standard = checkIntegrityPayload(await decoder.decode(CLASSIC_DEFAULTS.packageName, 'standard-token'), expectations());
    const classic = await verify(await mint(overrides));
    expect(standard).toEqual(classic);
  });

  it('compares the requestHash a standard request binds, instead of the nonce', async () => {
    const requestHash = b64url(createHash('sha256').update('POST /transfer amount=10').digest());
    const verdict = merge(classicVerdict(NOW), { requestDetails: { nonce: undefined, requestHash } });
    const decoder = fakeStandardDecoder(new Map([['t', verdict]]));
    const decoded = await decoder.decode(CLASSIC_DEFAULTS.packageName, 't');
    expect(checkIntegrityPayload(decoded, { ...expectations(), requestHash })).toEqual({ reasons: [], versionCode: 42 });
    expect(checkIntegrityPayload(decoded, { ...expectations(), requestHash: b64url('another request') }).reasons).toEqual(['challenge_mismatch']);
    // Without a requestHash to compare, the verdict is a classic one without its nonce.
    expect(checkIntegrityPayload(decoded, expectations()).reasons).toEqual(['challenge_mismatch']);
  });

  it('the fake decoder refuses a token it does not hold, as Google refuses one it did not issue', async () => {
    await expect(fakeStandardDecoder(new Map()).decode(CLASSIC_DEFAULTS.packageName, 'unknown')).rejects.toThrow('cannot be decoded');
  });
});
