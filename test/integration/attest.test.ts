// Protects: POST /v1/attest/verify: API keys with attest:verify only (no scope 403, access tokens 403), the stub rules
// end to end with engine stub, 422 on a token that is not base64url text (pointer /token) or breaks the contract's
// lengths, and Idempotency-Key (same body replayed with Idempotent-Replayed, another body 422).
import { startHarness, json, readJson, type Harness } from '../support/harness';
import { accessToken } from './threats-support';

let h: Harness;
let appId: string;
let device: string;
const NONCE = 'n0nce-1234567';
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const jws = (payload: unknown) => `${b64({ alg: 'ES256' })}.${b64(payload)}.${b64('sig')}`;
const playToken = (verdicts: string[], nonce = NONCE) =>
  jws({ requestDetails: { nonce }, appIntegrity: { appRecognitionVerdict: 'PLAY_RECOGNIZED' }, deviceIntegrity: { deviceRecognitionVerdict: verdicts } });

beforeAll(async () => {
  h = await startHarness();
  appId = (await h.newApp('scale')).appId;
  device = (await h.newKey(appId, ['attest:verify'])).key;
});
afterAll(async () => h.close());

async function verify(body: unknown, key = device, headers: Record<string, string> = {}) {
  const res = await h.api('/v1/attest/verify', { method: 'POST', headers: { ...json(key), ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: await readJson(res), headers: res.headers };
}

it('answers each stub verdict with engine stub', async () => {
  expect((await verify({ token: playToken(['MEETS_DEVICE_INTEGRITY']), nonce: NONCE, platform: 'android' })).body).toEqual({
    valid: true,
    verdict: 'trusted',
    reasons: [],
    engine: 'stub',
  });
  expect((await verify({ token: playToken(['MEETS_BASIC_INTEGRITY']), nonce: NONCE, platform: 'android' })).body).toMatchObject({
    verdict: 'suspicious',
    reasons: ['device_integrity_weak'],
  });
  expect((await verify({ token: playToken(['MEETS_DEVICE_INTEGRITY'], 'other-nonce-1'), nonce: NONCE, platform: 'android' })).body).toMatchObject({
    valid: true,
    verdict: 'untrusted',
    reasons: ['nonce_mismatch'],
  });
  expect((await verify({ token: playToken(['MEETS_DEVICE_INTEGRITY']), nonce: NONCE, platform: 'ios' })).body.reasons).toEqual(['platform_mismatch']);
  expect((await verify({ token: 'abcdefgh.ijklmnop', nonce: NONCE, platform: 'ios' })).body).toEqual({
    valid: false,
    verdict: 'untrusted',
    reasons: ['malformed_token'],
    engine: 'stub',
  });
});

it('answers 422 on /token when the token is not base64url text, and on contract lengths', async () => {
  const res = await verify({ token: 'not base64url at all!', nonce: NONCE, platform: 'android' });
  expect(res.status).toBe(422);
  expect(res.body.code).toBe('validation_failed');
  expect(res.body.errors).toEqual([{ pointer: '/token', message: expect.any(String) }]);
  expect(JSON.stringify(res.body)).not.toContain('not base64url at all!');
  for (const body of [
    { token: 'short', nonce: NONCE, platform: 'android' },
    { token: playToken([]), nonce: 'short', platform: 'android' },
    { token: playToken([]), nonce: NONCE, platform: 'windows' },
    { token: playToken([]), nonce: NONCE, platform: 'android', extra: true },
    { nonce: NONCE, platform: 'android' },
  ]) {
    expect((await verify(body)).status).toBe(422);
  }
});

it('needs an API key with attest:verify: other keys and access tokens get 403', async () => {
  const body = { token: playToken(['MEETS_DEVICE_INTEGRITY']), nonce: NONCE, platform: 'android' };
  const other = (await h.newKey(appId, ['events:ingest', 'threats:read'])).key;
  expect((await verify(body, other)).status).toBe(403);
  const token = await accessToken(h, appId, ['threats:read', 'builds:read']);
  const res = await verify(body, token);
  expect(res.status).toBe(403);
  expect(res.body.code).toBe('insufficient_scope');
  expect((await verify(body, 'svc_live_nope_nope')).status).toBe(401);
});

it('replays with the same Idempotency-Key and body, and refuses another body (422)', async () => {
  const body = { token: playToken(['MEETS_BASIC_INTEGRITY']), nonce: NONCE, platform: 'android' };
  const first = await verify(body, device, { 'idempotency-key': 'attest-key-0001' });
  expect(first.status).toBe(200);
  expect(first.headers.get('idempotent-replayed')).toBeNull();
  const again = await verify(body, device, { 'idempotency-key': 'attest-key-0001' });
  expect(again.status).toBe(200);
  expect(again.headers.get('idempotent-replayed')).toBe('true');
  expect(again.body).toEqual(first.body);
  const other = await verify({ ...body, nonce: 'another-nonce-9' }, device, { 'idempotency-key': 'attest-key-0001' });
  expect(other.status).toBe(422);
  expect(other.body.code).toBe('idempotency_key_reused');
});
