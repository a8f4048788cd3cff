// Protects: the stub attestation rules (docs/contract.md, "Attestation (stub)"): malformed -> valid false untrusted; nonce missing or different,
// or another platform -> untrusted; a payload reporting weak integrity -> suspicious; otherwise trusted; every rule
// that fired is listed; text that is not base64url -> validation_failed on /token.
import { evaluateStub, RISK_METRIC_HIGH } from '../../src/attest/attest-stub';
import { DomainError } from '../../src/core/errors';

const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
const jws = (payload: unknown, header: unknown = { alg: 'ES256' }) => `${b64(header)}.${b64(payload)}.${b64('signature-bytes')}`;
const NONCE = 'n0nce-1234567';
const play = (verdicts: string[], extra: Record<string, unknown> = {}) => ({
  requestDetails: { nonce: NONCE, requestPackageName: 'com.acme.bank' },
  appIntegrity: { appRecognitionVerdict: 'PLAY_RECOGNIZED' },
  deviceIntegrity: { deviceRecognitionVerdict: verdicts },
  ...extra,
});
const check = (token: string, platform: 'android' | 'ios' = 'android', nonce = NONCE) => evaluateStub({ token, nonce, platform });

it('trusts a well-formed token with the right nonce, platform and strong integrity', () => {
  expect(check(jws(play(['MEETS_DEVICE_INTEGRITY', 'MEETS_BASIC_INTEGRITY'])))).toEqual({ valid: true, verdict: 'trusted', reasons: [], engine: 'stub' });
  expect(check(jws({ nonce: NONCE, platform: 'ios', riskMetric: 1 }), 'ios')).toEqual({ valid: true, verdict: 'trusted', reasons: [], engine: 'stub' });
  expect(check(jws({ nonce: NONCE })).verdict).toBe('trusted'); // says nothing about platform or integrity
});

it.each([
  ['two parts', `${b64({ alg: 'ES256' })}.${b64({ nonce: NONCE })}`],
  ['four parts', `${jws({ nonce: NONCE })}.${b64('x')}`],
  ['empty signature', `${b64({ alg: 'ES256' })}.${b64({ nonce: NONCE })}.`],
  ['payload not JSON', `${b64({ alg: 'ES256' })}.${b64('not json')}.${b64('s')}`],
  ['payload an array', jws([NONCE])],
  ['header not an object', jws({ nonce: NONCE }, 'x')],
  ['padding inside', `${b64({ alg: 'ES256' })}=.${b64({ nonce: NONCE })}.${b64('s')}`],
  ['plain base64url', 'abcdefghijklmnop'],
])('answers valid false, untrusted, to a malformed token: %s', (_name, token) => {
  expect(check(token)).toEqual({ valid: false, verdict: 'untrusted', reasons: ['malformed_token'], engine: 'stub' });
});

it.each([['has spaces'], ['slash/and+plus'], ['émoji-ünicode'], ['quote"d-token']])('refuses text that is not base64url: %s', (token) => {
  try {
    check(token);
    throw new Error('expected a DomainError');
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('validation_failed');
    expect((error as DomainError).errors).toEqual([{ pointer: '/token', message: expect.any(String) }]);
  }
});

it('distrusts a missing or different nonce', () => {
  expect(check(jws({ platform: 'android' }))).toMatchObject({ valid: true, verdict: 'untrusted', reasons: ['nonce_missing'] });
  expect(check(jws({ nonce: 'another-nonce' }))).toMatchObject({ valid: true, verdict: 'untrusted', reasons: ['nonce_mismatch'] });
  expect(check(jws({ requestDetails: { nonce: 'another-nonce' } }))).toMatchObject({ verdict: 'untrusted', reasons: ['nonce_mismatch'] });
  expect(check(jws({ nonce: NONCE.toUpperCase() })).reasons).toEqual(['nonce_mismatch']); // exact comparison
});

it('distrusts a token of another platform, named or implied by its verdict shape', () => {
  expect(check(jws({ nonce: NONCE, platform: 'ios' }), 'android').reasons).toEqual(['platform_mismatch']);
  expect(check(jws(play(['MEETS_DEVICE_INTEGRITY'])), 'ios')).toMatchObject({ verdict: 'untrusted', reasons: ['platform_mismatch'] });
  expect(check(jws({ nonce: NONCE, riskMetric: 0 }), 'android').reasons).toEqual(['platform_mismatch']);
});

it('finds weak integrity suspicious, with each reason', () => {
  expect(check(jws(play(['MEETS_BASIC_INTEGRITY'])))).toMatchObject({ valid: true, verdict: 'suspicious', reasons: ['device_integrity_weak'] });
  expect(check(jws(play([])))).toMatchObject({ verdict: 'suspicious', reasons: ['device_integrity_weak'] });
  expect(check(jws(play(['MEETS_STRONG_INTEGRITY']))).verdict).toBe('trusted');
  expect(check(jws(play(['MEETS_DEVICE_INTEGRITY'], { appIntegrity: { appRecognitionVerdict: 'UNRECOGNIZED_VERSION' } }))).reasons).toEqual(['app_not_recognized']);
  expect(check(jws(play(['MEETS_DEVICE_INTEGRITY'], { accountDetails: { appLicensingVerdict: 'UNLICENSED' } }))).reasons).toEqual(['app_unlicensed']);
  expect(check(jws({ nonce: NONCE, riskMetric: RISK_METRIC_HIGH }), 'ios')).toMatchObject({ verdict: 'suspicious', reasons: ['risk_metric_high'] });
  expect(check(jws({ nonce: NONCE, riskMetric: RISK_METRIC_HIGH - 1 }), 'ios').verdict).toBe('trusted');
  expect(check(jws({ nonce: NONCE, riskMetric: 'HIGH' }), 'ios').reasons).toEqual(['risk_metric_high']);
});

it('lists every rule that fired; untrusted wins over suspicious', () => {
  const token = jws(play(['MEETS_BASIC_INTEGRITY'], { requestDetails: { nonce: 'other-nonce' }, accountDetails: { appLicensingVerdict: 'UNLICENSED' } }));
  expect(check(token, 'ios')).toEqual({
    valid: true,
    verdict: 'untrusted',
    reasons: ['nonce_mismatch', 'platform_mismatch', 'device_integrity_weak', 'app_unlicensed'],
    engine: 'stub',
  });
});

it('refuses any principal but an API key with attest:verify, even an access token carrying the scope', async () => {
  const { verifyAttestation } = await import('../../src/services/attest-service');
  const input = { token: `${b64({ alg: 'ES256' })}.${b64({ nonce: NONCE })}.${b64('s')}`, nonce: NONCE, platform: 'android' as const };
  // An app without an attestation configuration: the stub answers (the configured path is test/integration/attestation*).
  const ctxOf = (principal: unknown) => ({ principal, deps: { config: { keyEncryptionKey: null }, instance: { attestConfigs: { of: async () => null } } } }) as never;
  const oidc = { kind: 'oidc', appId: 'app_x', scopes: ['attest:verify'] };
  await expect(verifyAttestation(ctxOf(oidc), input)).rejects.toMatchObject({ code: 'insufficient_scope' });
  await expect(verifyAttestation(ctxOf({ kind: 'staff', role: 'admin' }), input)).rejects.toMatchObject({ code: 'insufficient_scope' });
  await expect(verifyAttestation(ctxOf({ kind: 'anonymous' }), input)).rejects.toMatchObject({ code: 'unauthorized' });
  await expect(verifyAttestation(ctxOf({ kind: 'api_key', appId: 'app_x', scopes: ['events:ingest'] }), input)).rejects.toMatchObject({ code: 'insufficient_scope' });
  await expect(verifyAttestation(ctxOf({ kind: 'api_key', appId: 'app_x', scopes: ['attest:verify'] }), input)).resolves.toMatchObject({ verdict: 'trusted' });
});

it('holds the contract bounds of token, nonce and keyId whoever calls it, with a pointer for each', async () => {
  const { verifyAttestation } = await import('../../src/services/attest-service');
  const ctx = { principal: { kind: 'api_key', appId: 'app_x', scopes: ['attest:verify'] }, deps: { config: { keyEncryptionKey: null }, instance: { attestConfigs: { of: async () => null } } } } as never;
  const refusal = verifyAttestation(ctx, { token: 'x'.repeat(8193), nonce: 'n'.repeat(129), platform: 'ios', keyId: 'not-a-key-id' });
  await expect(refusal).rejects.toMatchObject({ code: 'validation_failed' });
  const errors = await refusal.catch((e: { errors: Array<{ pointer: string }> }) => e.errors.map((x) => x.pointer));
  expect(errors).toEqual(['/token', '/nonce', '/keyId']);
});
