// Protects: the checks on an incoming OIDC token (spec POST /v1/auth/oidc checks 1-6) with a real loopback issuer and
// real signatures: RS256/ES256 only and agreeing with the key type, kid required, RSA >= 2048 bits, exact iss and aud
// (a string, not an array), exp/iat/jti required, lifetime <= 1 h, 60 s tolerance, 8192-character limit before
// parsing, sub belonging to the repository, pull-request events; the RFC 8725 attacks; JWKS discovery on the issuer's
// origin, caching, and one refetch per cooldown for an unknown kid. Every failure is an OidcRefusal with its reason.
import { createPublicKey } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ManualClock } from '../../src/core/clock';
import { IssuerKeys, JWKS_CACHE_MS, JWKS_REFETCH_COOLDOWN_MS } from '../../src/oidc/issuer-keys';
import { verifyProviderToken, modulusBits } from '../../src/oidc/token-verifier';
import { GITHUB } from '../../src/oidc/providers/github';
import { isOidcRefusal, type RefusalReason } from '../../src/oidc/refusal';
import { hs256, startOidcIssuer, type OidcIssuer } from '../support/oidc-issuer';

const AUDIENCE = 'https://api.shieldgate.test';
let issuer: OidcIssuer;
let clock: ManualClock;
let keys: IssuerKeys;

beforeAll(async () => {
  issuer = await startOidcIssuer();
});
afterAll(async () => {
  await issuer.close();
});
beforeEach(() => {
  clock = new ManualClock(new Date('2025-03-14T08:00:00Z'));
  keys = new IssuerKeys(issuer.url, clock);
  issuer.publish(Object.values(issuer.keys));
  issuer.setDiscovery(null);
  issuer.setFailure(null);
});

const claims = (overrides: Record<string, unknown> = {}) => issuer.claims({ audience: AUDIENCE, now: clock.now() }, overrides);
const verify = (token: string) => verifyProviderToken(GITHUB, keys, { issuer: issuer.url, audience: AUDIENCE, now: clock.now() }, token);

async function reasonOf(token: string): Promise<{ reason: RefusalReason; subject: string | null }> {
  try {
    await verify(token);
  } catch (error) {
    if (isOidcRefusal(error)) return { reason: error.reason, subject: error.subject };
    throw error;
  }
  throw new Error('the token was accepted');
}

describe('a token exactly as GitHub issues it', () => {
  // GitHub Docs, "OpenID Connect reference", example token: header and payload members in GitHub's order and types,
  // with our issuer's key, URL and audience and times moved to now (nbf 600 s before iat, exp 300 s after).
  it('verifies a token byte-shaped like the documented example', async () => {
    const key = issuer.keys.rsa;
    const iat = Math.floor(clock.now().getTime() / 1000);
    const header = `{"typ":"JWT","alg":"RS256","x5t":"${key.x5t}","kid":"${key.kid}"}`;
    const payload =
      `{"jti":"example-id","sub":"repo:octo-org/octo-repo:environment:prod","environment":"prod","aud":"${AUDIENCE}",` +
      `"ref":"refs/heads/main","sha":"example-sha","repository":"octo-org/octo-repo","repository_owner":"octo-org",` +
      `"actor_id":"12","repository_visibility":"private","repository_id":"74","repository_owner_id":"65",` +
      `"run_id":"example-run-id","run_number":"10","run_attempt":"2","runner_environment":"github-hosted",` +
      `"actor":"octocat","workflow":"example-workflow","head_ref":"","base_ref":"","event_name":"workflow_dispatch",` +
      `"ref_type":"branch","job_workflow_ref":"octo-org/octo-automation/.github/workflows/oidc.yml@refs/heads/main",` +
      `"iss":"${issuer.url}","nbf":${iat - 600},"exp":${iat + 300},"iat":${iat}}`;
    const signingInput = `${Buffer.from(header).toString('base64url')}.${Buffer.from(payload).toString('base64url')}`;
    const { sign } = await import('node:crypto');
    const token = `${signingInput}.${sign('sha256', Buffer.from(signingInput), key.privateKey).toString('base64url')}`;
    const verified = await verify(token);
    expect(verified).toMatchObject({ sub: 'repo:octo-org/octo-repo:environment:prod', jti: 'example-id', exp: iat + 300 });
    expect(verified.claims).toEqual(JSON.parse(payload));
  });

  it('mints by default the header and every claim GitHub documents, with GitHub value formats', async () => {
    const token = issuer.sign(claims());
    const [header, payload] = token.split('.').slice(0, 2).map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()));
    expect(Object.keys(header)).toEqual(['typ', 'alg', 'x5t', 'kid']);
    expect(header).toEqual({ typ: 'JWT', alg: 'RS256', x5t: issuer.keys.rsa.x5t, kid: issuer.keys.rsa.kid });
    for (const name of ['jti', 'sub', 'aud', 'ref', 'sha', 'repository', 'repository_owner', 'repository_owner_id', 'repository_id', 'repository_visibility', 'run_id', 'run_number', 'run_attempt', 'runner_environment', 'actor', 'actor_id', 'workflow', 'workflow_ref', 'workflow_sha', 'head_ref', 'base_ref', 'event_name', 'ref_type', 'ref_protected', 'job_workflow_ref', 'job_workflow_sha', 'iss']) {
      expect({ name, type: typeof payload[name] }).toEqual({ name, type: 'string' });
    }
    expect(payload).not.toHaveProperty('environment'); // only when the job has one
    expect(payload.ref_protected).toMatch(/^(true|false)$/);
    expect(payload.run_id).toMatch(/^[0-9]+$/);
    expect(payload.sha).toMatch(/^[0-9a-f]{40}$/);
    expect(payload.nbf).toBeLessThan(payload.iat);
    expect(payload.exp - payload.iat).toBe(300);
    await expect(verify(token)).resolves.toBeDefined();
  });

  it('publishes keys shaped like GitHub\'s: x5c a real certificate of the key, x5t its SHA-1 thumbprint', async () => {
    const res = await fetch(`${issuer.url}/.well-known/jwks`);
    const { keys: published } = (await res.json()) as { keys: Array<Record<string, any>> };
    const rsa = published.find((key) => key.kid === issuer.keys.rsa.kid)!;
    expect(Object.keys(rsa).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use', 'x5c', 'x5t']);
    expect(rsa).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', e: 'AQAB' });
    const { X509Certificate, createHash } = await import('node:crypto');
    const der = Buffer.from(rsa.x5c[0], 'base64');
    const certificate = new X509Certificate(der);
    expect(createHash('sha1').update(der).digest('base64url')).toBe(rsa.x5t);
    expect(certificate.publicKey.export({ format: 'jwk' })).toMatchObject({ n: rsa.n, e: rsa.e });
    expect(certificate.verify(certificate.publicKey)).toBe(true); // self-signed
  });
});

describe('a valid token', () => {
  it('verifies with RSA-2048, RSA-3072 and EC P-256 keys and exposes the checked claims', async () => {
    for (const key of [issuer.keys.rsa, issuer.keys.rsa3072, issuer.keys.ec]) {
      const verified = await verify(issuer.sign(claims({ environment: 'prod' }), { key }));
      expect(verified).toMatchObject({ issuer: issuer.url, sub: 'repo:acme/mobile-app:environment:prod', exp: expect.any(Number), jti: expect.any(String) });
      expect(verified.claims).toMatchObject({
        job_workflow_ref: 'acme/mobile-app/.github/workflows/release.yml@refs/heads/main',
        environment: 'prod',
        repository_id: '123456789',
        repository_owner_id: '4242',
      });
    }
  });

  it('accepts a typ of JWT in any case, or none', async () => {
    await expect(verify(issuer.sign(claims(), { header: { typ: 'jwt' } }))).resolves.toBeDefined();
    await expect(verify(issuer.sign(claims(), { header: { typ: undefined } }))).resolves.toBeDefined();
  });
});

describe('check 1: algorithm', () => {
  it('refuses alg none, with or without a signature', async () => {
    const header = { alg: 'none', kid: issuer.keys.rsa.kid, typ: 'JWT' };
    expect((await reasonOf(issuer.forge(header, claims(), () => Buffer.alloc(0)))).reason).toBe('malformed'); // empty signature part
    expect((await reasonOf(issuer.forge(header, claims(), () => Buffer.from('x')))).reason).toBe('algorithm');
  });

  it('refuses HS256 keyed with the public key (algorithm confusion)', async () => {
    const pem = createPublicKey(issuer.keys.rsa.privateKey).export({ type: 'spki', format: 'pem' });
    const token = issuer.forge({ alg: 'HS256', kid: issuer.keys.rsa.kid, typ: 'JWT' }, claims(), hs256(pem));
    expect((await reasonOf(token)).reason).toBe('algorithm');
    const jwkBytes = issuer.forge({ alg: 'HS256', kid: issuer.keys.rsa.kid }, claims(), hs256(JSON.stringify(issuer.keys.rsa.publicJwk)));
    expect((await reasonOf(jwkBytes)).reason).toBe('algorithm');
  });

  it('refuses other algorithms, and an algorithm that does not agree with the key type', async () => {
    for (const alg of ['RS384', 'RS512', 'PS256', 'ES384', 'EdDSA', 'rs256']) {
      expect((await reasonOf(issuer.sign(claims(), { header: { alg } })))).toEqual({ reason: 'algorithm', subject: null });
    }
    // ES256 named on an RSA key, RS256 on the EC key.
    expect((await reasonOf(issuer.sign(claims(), { key: issuer.keys.rsa, header: { alg: 'ES256' } }))).reason).toBe('algorithm');
    expect((await reasonOf(issuer.sign(claims(), { key: issuer.keys.ec, header: { alg: 'RS256' } }))).reason).toBe('algorithm');
  });

  it('refuses a key whose own alg or use disagrees', async () => {
    const odd = issuer.newKey('RS256', 'odd-alg');
    odd.publicJwk = { ...odd.publicJwk, alg: 'RS512' };
    const enc = issuer.newKey('RS256', 'enc-use');
    enc.publicJwk = { ...enc.publicJwk, use: 'enc' };
    issuer.publish([odd, enc]);
    expect((await reasonOf(issuer.sign(claims(), { key: odd }))).reason).toBe('algorithm');
    expect((await reasonOf(issuer.sign(claims(), { key: enc }))).reason).toBe('algorithm');
  });
});

describe('check 2: kid and key size', () => {
  it('refuses a token without kid even when the key set holds a single key', async () => {
    issuer.publish([issuer.keys.rsa]);
    expect((await reasonOf(issuer.sign(claims(), { header: { kid: undefined } }))).reason).toBe('no_kid');
    expect((await reasonOf(issuer.sign(claims(), { header: { kid: '' } }))).reason).toBe('no_kid');
    expect((await reasonOf(issuer.sign(claims(), { header: { kid: 42 } }))).reason).toBe('no_kid');
  });

  it('refuses a kid the issuer does not publish', async () => {
    const stranger = issuer.newKey('RS256', 'not-published');
    expect((await reasonOf(issuer.sign(claims(), { key: stranger }))).reason).toBe('unknown_key');
  });

  it('refuses an RSA key under 2048 bits, though the signature is real', async () => {
    expect((await reasonOf(issuer.sign(claims(), { key: issuer.keys.weakRsa }))).reason).toBe('key_size');
    expect(modulusBits(issuer.keys.weakRsa.publicJwk.n!)).toBe(1024);
    expect(modulusBits(issuer.keys.rsa.publicJwk.n!)).toBe(2048);
    expect(modulusBits(issuer.keys.rsa3072.publicJwk.n!)).toBe(3072);
    expect(modulusBits(Buffer.from([0, 0, 1]).toString('base64url'))).toBe(1);
    expect(modulusBits('')).toBe(0);
  });

  it('refuses a signature made with another key under a published kid', async () => {
    const impostor = issuer.newKey('RS256', issuer.keys.rsa.kid);
    expect((await reasonOf(issuer.sign(claims(), { key: impostor }))).reason).toBe('bad_signature');
    const token = issuer.sign(claims());
    const [h, p, s] = token.split('.');
    const flipped = `${h}.${p}.${s.slice(0, 10)}${s[10] === 'A' ? 'B' : 'A'}${s.slice(11)}`;
    expect((await reasonOf(flipped)).reason).toBe('bad_signature');
  });
});

describe('RFC 8725 header attacks', () => {
  it.each([
    ['jwk', () => issuer.newKey('RS256', 'attacker').publicJwk],
    ['jku', () => 'https://attacker.example/jwks'],
    ['x5u', () => 'https://attacker.example/cert.pem'],
    ['x5c', () => issuer.keys.rsa.publicJwk.x5c],
    ['crit', () => ['exp']],
    ['cty', () => 'JWT'],
  ])('refuses a %s header even on a valid signature', async (name, value) => {
    expect((await reasonOf(issuer.sign(claims(), { header: { [name]: value() } }))).reason).toBe('forbidden_header');
  });

  it('ignores x5t and x5t#S256: the key is the issuer key named by kid, whatever the hints say', async () => {
    const other = issuer.keys.rsa3072;
    await expect(verify(issuer.sign(claims(), { header: { x5t: other.x5t } }))).resolves.toBeDefined();
    await expect(verify(issuer.sign(claims(), { header: { x5t: 'not-a-thumbprint', 'x5t#S256': 'abc' } }))).resolves.toBeDefined();
    await expect(verify(issuer.sign(claims(), { header: { x5t: undefined } }))).resolves.toBeDefined();
    // A hint naming the real key does not make another key's signature good.
    const impostor = issuer.newKey('RS256', issuer.keys.rsa.kid);
    expect((await reasonOf(issuer.sign(claims(), { key: impostor, header: { x5t: issuer.keys.rsa.x5t } }))).reason).toBe('bad_signature');
  });

  it('refuses a nested token and another typ', async () => {
    const inner = issuer.sign(claims());
    const nested = issuer.forge({ alg: 'RS256', kid: issuer.keys.rsa.kid, typ: 'JWT', cty: 'JWT' }, claims({ nested: inner }), () => Buffer.from('x'));
    expect((await reasonOf(nested)).reason).toBe('forbidden_header');
    expect((await reasonOf(issuer.sign(claims(), { header: { typ: 'at+jwt' } }))).reason).toBe('forbidden_header');
    expect((await reasonOf(issuer.sign(claims(), { header: { typ: 7 } }))).reason).toBe('forbidden_header');
  });

  it('refuses an oversized token before parsing it, and malformed text', async () => {
    const big = issuer.sign(claims({ padding: 'x'.repeat(9000) }));
    expect((await reasonOf(big)).reason).toBe('too_long');
    expect((await reasonOf(`${'a'.repeat(8190)}.b.c`)).reason).toBe('too_long');
    for (const text of ['', 'not a token', 'a.b', 'a.b.c.d.e', '!!!.###.$$$', `${Buffer.from('[1]').toString('base64url')}.e30.AA`]) {
      expect((await reasonOf(text)).reason).toBe('malformed');
    }
    expect((await reasonOf('e30.e30.e30')).reason).toBe('algorithm'); // a header without alg
  });

  it('maps unexpected errors inside jose (a payload that is not JSON) to a refusal', async () => {
    const token = issuer.forge({ alg: 'RS256', kid: issuer.keys.rsa.kid }, claims(), () => Buffer.alloc(0));
    const [h] = token.split('.');
    const signingInput = `${h}.${Buffer.from('not json').toString('base64url')}`;
    const { sign } = await import('node:crypto');
    const sig = sign('sha256', Buffer.from(signingInput), issuer.keys.rsa.privateKey).toString('base64url');
    expect((await reasonOf(`${signingInput}.${sig}`)).reason).toBe('malformed');
  });
});

describe('errors jose raises as plain TypeErrors', () => {
  it('refuses (malformed) when the issuer publishes an EC key that is not on the curve', async () => {
    const broken = issuer.newKey('ES256', 'broken-ec');
    broken.publicJwk = { ...broken.publicJwk, x: Buffer.alloc(32, 1).toString('base64url'), y: Buffer.alloc(32, 2).toString('base64url') };
    issuer.publish([broken]);
    expect((await reasonOf(issuer.sign(claims(), { key: broken }))).reason).toBe('malformed');
  });
});

describe('check 3: issuer and audience', () => {
  it('requires the exact issuer', async () => {
    for (const iss of [`${issuer.url}/`, issuer.url.toUpperCase(), 'https://token.actions.githubusercontent.com', undefined]) {
      const refusal = await reasonOf(issuer.sign(claims({ iss })));
      expect(refusal.reason).toBe(iss === undefined ? 'missing_claim' : 'issuer');
      expect(refusal.subject).toBe('repo:acme/mobile-app:ref:refs/heads/main'); // after the signature: authentic
    }
  });

  it('requires the audience as exactly our string, not an array that contains it', async () => {
    expect((await reasonOf(issuer.sign(claims({ aud: [AUDIENCE] })))).reason).toBe('audience');
    expect((await reasonOf(issuer.sign(claims({ aud: [AUDIENCE, 'https://other.example'] })))).reason).toBe('audience');
    expect((await reasonOf(issuer.sign(claims({ aud: `${AUDIENCE}/` })))).reason).toBe('audience');
    expect((await reasonOf(issuer.sign(claims({ aud: 'https://other.example' })))).reason).toBe('audience');
    expect((await reasonOf(issuer.sign(claims({ aud: undefined })))).reason).toBe('missing_claim');
  });
});

describe('check 4: times and jti', () => {
  it('accepts up to 60 s after exp and refuses after', async () => {
    const token = issuer.sign(claims());
    clock.advance(300_000 + 59_000);
    await expect(verify(token)).resolves.toBeDefined();
    clock.advance(1000);
    expect(await reasonOf(token)).toEqual({ reason: 'expired', subject: 'repo:acme/mobile-app:ref:refs/heads/main' });
  });

  it('accepts iat and nbf up to 60 s ahead and refuses beyond', async () => {
    const now = Math.floor(clock.now().getTime() / 1000);
    await expect(verify(issuer.sign(claims({ iat: now + 60, nbf: now + 60, exp: now + 600 })))).resolves.toBeDefined();
    expect((await reasonOf(issuer.sign(claims({ nbf: now + 61, exp: now + 600 })))).reason).toBe('not_yet_valid');
    expect((await reasonOf(issuer.sign(claims({ iat: now + 61, nbf: undefined, exp: now + 600 })))).reason).toBe('not_yet_valid');
  });

  it('refuses a lifetime over one hour and accepts exactly one hour', async () => {
    const now = Math.floor(clock.now().getTime() / 1000);
    await expect(verify(issuer.sign(claims({ iat: now, nbf: now, exp: now + 3600 })))).resolves.toBeDefined();
    expect((await reasonOf(issuer.sign(claims({ iat: now, nbf: now, exp: now + 3601 })))).reason).toBe('lifetime');
    expect((await reasonOf(issuer.sign(claims({ iat: now, exp: now })))).reason).toBe('lifetime');
    // The lifetime starts at the earlier of nbf and iat.
    expect((await reasonOf(issuer.sign(claims({ iat: now, nbf: now - 1000, exp: now + 2601 })))).reason).toBe('lifetime');
    await expect(verify(issuer.sign(claims({ iat: now, nbf: now - 1000, exp: now + 2600 })))).resolves.toBeDefined();
  });

  it('refuses a token issued over an hour ago even when exp says otherwise', async () => {
    const now = Math.floor(clock.now().getTime() / 1000);
    expect((await reasonOf(issuer.sign(claims({ iat: now - 3700, nbf: now - 3700, exp: now + 100 })))).reason).toMatch(/^(lifetime|expired)$/);
  });

  it.each(['exp', 'iat', 'jti', 'sub', 'repository'])('requires %s', async (claim) => {
    expect((await reasonOf(issuer.sign(claims({ [claim]: undefined })))).reason).toBe('missing_claim');
  });

  it('refuses claims of the wrong type', async () => {
    expect((await reasonOf(issuer.sign(claims({ jti: 42 })))).reason).toBe('missing_claim');
    expect((await reasonOf(issuer.sign(claims({ jti: 'j'.repeat(257) })))).reason).toBe('missing_claim');
    expect((await reasonOf(issuer.sign(claims({ exp: 'soon' })))).reason).toBe('malformed');
    expect((await reasonOf(issuer.sign(claims({ repository: ['acme/mobile-app'] })))).reason).toBe('missing_claim');
  });
});

describe('checks 5 and 6: subject and event', () => {
  it('refuses a sub of another repository than the one claimed', async () => {
    const refusal = await reasonOf(issuer.sign(claims({ sub: 'repo:acme/other-app:ref:refs/heads/main' })));
    expect(refusal).toEqual({ reason: 'subject_mismatch', subject: 'repo:acme/other-app:ref:refs/heads/main' });
  });

  it('accepts the immutable form with matching ids and refuses it otherwise', async () => {
    const sub = 'repo:acme@4242/mobile-app@123456789:ref:refs/heads/main';
    expect((await verify(issuer.sign(claims({ sub })))).sub).toBe(sub);
    expect((await reasonOf(issuer.sign(claims({ sub, repository_id: '1' })))).reason).toBe('subject_mismatch');
    expect((await reasonOf(issuer.sign(claims({ sub, repository_owner_id: undefined })))).reason).toBe('subject_mismatch');
  });

  it('accepts subjects customised by a repository template when the token\'s own claims explain every part', async () => {
    const workflow = 'acme/mobile-app/.github/workflows/release.yml@refs/heads/main';
    for (const sub of [
      `repo:acme/mobile-app:environment:prod:job_workflow_ref:${workflow}`,
      'repository_owner_id:4242:repository_id:123456789:environment:prod',
      'repo:acme@4242/mobile-app@123456789:environment:prod:event_name:push',
      'repo:acme/mobile-app:ref:refs/heads/main:runner_environment:github-hosted:ref_type:branch',
    ]) {
      expect((await verify(issuer.sign(claims({ sub, environment: 'prod' })))).sub).toBe(sub);
    }
  });

  it('refuses a customised subject with a part the claims do not explain', async () => {
    const at = (sub: string, extra: Record<string, unknown> = {}) => reasonOf(issuer.sign(claims({ sub, environment: 'prod', ...extra })));
    expect((await at('repo:acme/mobile-app:environment:prod:job_workflow_ref:evil/x/.github/workflows/a.yml@refs/heads/main')).reason).toBe('subject_mismatch');
    expect((await at('repository_owner_id:1:repository_id:123456789:environment:prod')).reason).toBe('subject_unrecognized');
    expect((await at('repo:acme/mobile-app:environment:prod:favourite_colour:blue')).reason).toBe('subject_mismatch');
    expect((await at('environment:prod:repo:evil/mobile-app')).reason).toBe('subject_unrecognized');
    expect((await at('repo:evil/mobile-app:environment:prod')).reason).toBe('subject_mismatch');
    expect((await at('environment:staging')).reason).toBe('subject_unrecognized');
  });

  it.each(['pull_request', 'pull_request_target', 'pull_request_review'])('refuses %s events', async (event_name) => {
    expect((await reasonOf(issuer.sign(claims({ event_name })))).reason).toBe('pull_request');
  });

  it('refuses a pull-request subject whatever the event says', async () => {
    expect((await reasonOf(issuer.sign(claims({ sub: 'repo:acme/mobile-app:pull_request', event_name: 'push' })))).reason).toBe('pull_request');
  });

  it('accepts other events (workflow_run is left to the rules)', async () => {
    for (const event_name of ['push', 'workflow_dispatch', 'release', 'workflow_run', undefined]) {
      await expect(verify(issuer.sign(claims({ event_name })))).resolves.toBeDefined();
    }
  });
});

describe('the issuer key set', () => {
  it('is cached: many verifications, one fetch', async () => {
    const before = issuer.jwksFetches;
    for (let i = 0; i < 5; i++) await verify(issuer.sign(claims()));
    expect(issuer.jwksFetches - before).toBe(1);
  });

  it('is read again after the cache lifetime', async () => {
    await verify(issuer.sign(claims()));
    const before = issuer.jwksFetches;
    clock.advance(JWKS_CACHE_MS - 1);
    await verify(issuer.sign(claims()));
    expect(issuer.jwksFetches).toBe(before);
    clock.advance(1);
    await verify(issuer.sign(claims()));
    expect(issuer.jwksFetches).toBe(before + 1);
  });

  it('refetches once for an unknown kid, then not again until the cooldown has passed', async () => {
    await verify(issuer.sign(claims()));
    const rotated = issuer.newKey('ES256', 'rotated-in');
    const before = issuer.jwksFetches;
    // Not yet published: a forged or early kid gets one refetch within the cooldown at most.
    clock.advance(JWKS_REFETCH_COOLDOWN_MS);
    expect((await reasonOf(issuer.sign(claims(), { key: rotated }))).reason).toBe('unknown_key');
    expect(issuer.jwksFetches).toBe(before + 1);
    issuer.publish([...Object.values(issuer.keys), rotated]);
    expect((await reasonOf(issuer.sign(claims(), { key: rotated }))).reason).toBe('unknown_key');
    expect(issuer.jwksFetches).toBe(before + 1);
    clock.advance(JWKS_REFETCH_COOLDOWN_MS);
    await expect(verify(issuer.sign(claims(), { key: rotated }))).resolves.toBeDefined();
    expect(issuer.jwksFetches).toBe(before + 2);
  });

  it('shares one fetch among concurrent verifications', async () => {
    const before = issuer.jwksFetches;
    await Promise.all(Array.from({ length: 8 }, () => verify(issuer.sign(claims()))));
    expect(issuer.jwksFetches - before).toBe(1);
  });

  it('refuses when the issuer is down, and recovers after the cooldown', async () => {
    issuer.setFailure(503);
    expect((await reasonOf(issuer.sign(claims()))).reason).toBe('jwks_unavailable');
    issuer.setFailure(null);
    expect((await reasonOf(issuer.sign(claims()))).reason).toBe('jwks_unavailable'); // no hammering inside the cooldown
    clock.advance(JWKS_REFETCH_COOLDOWN_MS);
    await expect(verify(issuer.sign(claims()))).resolves.toBeDefined();
  });

  it('refuses a jwks_uri off the issuer origin, and a discovery document naming another issuer', async () => {
    issuer.setDiscovery({ issuer: issuer.url, jwks_uri: 'http://127.0.0.2:1/.well-known/jwks' });
    expect((await reasonOf(issuer.sign(claims()))).reason).toBe('jwks_unavailable');
    clock.advance(JWKS_REFETCH_COOLDOWN_MS);
    issuer.setDiscovery({ issuer: 'https://token.actions.githubusercontent.com', jwks_uri: `${issuer.url}/.well-known/jwks` });
    expect((await reasonOf(issuer.sign(claims()))).reason).toBe('jwks_unavailable');
    clock.advance(JWKS_REFETCH_COOLDOWN_MS);
    issuer.setDiscovery({ issuer: issuer.url });
    expect((await reasonOf(issuer.sign(claims()))).reason).toBe('jwks_unavailable');
    clock.advance(JWKS_REFETCH_COOLDOWN_MS);
    issuer.setDiscovery({ issuer: issuer.url, jwks_uri: 'not a url' });
    expect((await reasonOf(issuer.sign(claims()))).reason).toBe('jwks_unavailable');
    clock.advance(JWKS_REFETCH_COOLDOWN_MS);
    issuer.setDiscovery(null);
    await expect(verify(issuer.sign(claims()))).resolves.toBeDefined();
  });

  it('stops reading an answer past 256 KiB, however much more the issuer would send', async () => {
    // An issuer that streams 64 MiB of discovery document (a self-managed GitLab is a tenant's own server).
    let written = 0;
    let closed!: () => void;
    const connectionClosed = new Promise<void>((resolve) => (closed = resolve));
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.on('close', closed);
      const pump = () => {
        while (written < 64 * 1024 * 1024 && !res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) return res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const flooding = new IssuerKeys(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, clock);
      await expect(flooding.keyFor('any')).rejects.toThrow(/larger than 262144 bytes/);
      await connectionClosed; // the reader gave up: the connection closed long before the 64 MiB
      expect(written).toBeLessThan(16 * 1024 * 1024);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
