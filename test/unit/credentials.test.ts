// Protects: bearer parsing recognises only the credential shapes the service issues, and secret comparison.
import { formatApiKey, formatStaffToken, parseBearer } from '../../src/crypto/credentials';
import { newSecret, secretMatches, sha256Hex } from '../../src/crypto/secrets';

describe('parseBearer', () => {
  const secret = newSecret();

  it('reads live and test API keys', () => {
    expect(parseBearer(`Bearer ${formatApiKey('live', 'abcDEF123456', secret)}`)).toEqual({ kind: 'api_key', mode: 'live', id: 'abcDEF123456', secret });
    expect(parseBearer(`bearer ${formatApiKey('test', 'abcDEF123456', secret)}`)).toMatchObject({ kind: 'api_key', mode: 'test' });
  });

  it('reads staff tokens and JWTs', () => {
    expect(parseBearer(`Bearer ${formatStaffToken('abcDEF123456', secret)}`)).toEqual({ kind: 'staff', id: 'abcDEF123456', secret });
    expect(parseBearer('Bearer aaa.bbb.ccc')).toEqual({ kind: 'jwt', token: 'aaa.bbb.ccc' });
  });

  it.each([
    undefined,
    '',
    'Basic dXNlcjpwYXNz',
    'Bearer',
    'Bearer ',
    'Bearer svc_prod_abcDEF123456_' + 'x'.repeat(43),
    'Bearer svc_live_ab_' + 'x'.repeat(43),
    'Bearer svc_live_abcDEF123456_short',
    'Bearer two words',
    'Bearer ' + 'a'.repeat(5000),
    'Bearer a.b',
    'Bearer a.b.c.d.e',
  ])('refuses %p', (header) => {
    expect(parseBearer(header)).toBeNull();
  });
});

describe('secretMatches', () => {
  it('matches only the secret whose hash is stored', () => {
    const secret = newSecret();
    expect(secretMatches(secret, sha256Hex(secret))).toBe(true);
    expect(secretMatches(`${secret}x`, sha256Hex(secret))).toBe(false);
    expect(secretMatches(secret, 'not-hex')).toBe(false);
  });
});
