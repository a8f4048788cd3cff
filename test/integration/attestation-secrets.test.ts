// Protects: nothing an attestation carries leaves the service through an output not made for it (docs/attestation.md:
// "No token, nonce, key or verdict token is ever logged or audited"). An app is configured with fresh Play Integrity
// keys and iOS, then verified in every way a device or an operator can get right or wrong, over REST and over
// /graphql (a staff admin): genuine, malformed and misaddressed Play Integrity tokens, a key attestation chain that
// is no chain, a real App Attest attestation and a fresh assertion, unknown and replayed nonces, a body that is not
// JSON, a token over its limit and a body over the body limit, a missing or wrong credential, an Idempotency-Key
// reused, configurations whose keys do not parse, and GraphQL variables that do not fit their input type. Every
// token, key (the decryption key, the verification key's text, the keys of the refused configurations), nonce,
// App Attest key id and verdict token is recorded as planted, and every output is read: every log line at the most
// verbose level, every response body (problems and GraphQL errors included), the audit trail over REST and in its
// collection, /metrics, and every other collection of the database. An output may hold only what it exists to
// give: a challenge its nonce, a verdict its verdict token and App Attest key id, a configuration its verification
// key, the collections the stored keys and replayable answers. A value counts as shown when it is there whole, or
// any 20 characters of what is particular to it (a JWE's or JWT's segments after its protected header, a P-256
// key's point after the common SPKI prefix), also re-encoded (base64, base64url, hex). The grep is checked too:
// values planted on purpose into collected outputs, and outputs that hold a value by design, are found.
// GraphQL refusals name the variable, where in it and why, never what was sent: graphql-js quotes the value whole
// (src/graphql/apollo.ts, withoutSentValues, cuts it).
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { encode as encodeCbor } from 'cbor2';
import { startHarness, bearer, json, type Harness } from '../support/harness';
import { challengeIdOf } from '../../src/data/attest-challenges-repo';
import { mintClassicToken, encryptClassic, playIntegrityKeys, signerDigest } from '../support/play-integrity-tokens';

type Kind = 'token' | 'decryptionKey' | 'verificationKey' | 'nonce' | 'verdictToken' | 'keyId';
interface Planted {
  name: string;
  kind: Kind;
  value: string;
}
interface Output {
  name: string;
  text: string;
  /** What this output exists to give (a challenge its nonce, a verdict its verdict token): allowed in it. */
  allows: Kind[];
}

const METRICS_TOKEN = `mt-${randomBytes(16).toString('hex')}`;
const PACKAGE = 'com.example.attestsecrets';
const APPLE = JSON.parse(readFileSync(path.join(__dirname, '../fixtures/attestation/apple-app-attest/veehaitch-ios-14.2.json'), 'utf8'));
/** Every EC P-256 SubjectPublicKeyInfo in base64 starts so: what is particular to a key is its point after it. */
const SPKI_P256_PREFIX = 'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE';
/** A value shows when any this many consecutive characters of what is particular to it do (120 bits of base64). */
const WINDOW = 20;

let h: Harness;
const logs: string[] = [];
const planted: Planted[] = [];
const outputs: Output[] = [];

const plant = (kind: Kind, name: string, value: string): string => {
  planted.push({ kind, name, value });
  return value;
};
const collect = (name: string, text: string, allows: Kind[] = []): string => {
  outputs.push({ name, text, allows });
  return text;
};

beforeAll(async () => {
  h = await startHarness({ jobs: false, env: { LOG_LEVEL: 'trace', METRICS_TOKEN }, logTo: { write: (line) => void logs.push(line) } });
});
afterAll(async () => {
  await h.close();
});

/** The encodings of a base64 or base64url value's bytes that an output could show instead of the text sent. */
function reencodings(text: string): string[] {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text) || text.length < 22) return [];
  const bytes = Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return [bytes.toString('base64'), bytes.toString('base64url'), bytes.toString('hex')];
}

/**
 * What is particular to a planted value: a compact JWE's or JWT's segments past its protected header, cut where a
 * P-256 key's common SPKI prefix shows (a key's own text, or a certificate's in an App Attest object). Keys, nonces
 * and key ids are also looked for re-encoded; tokens are not (a token's bytes hold public data an output may hold
 * by design in another form: an App Attest object holds SHA-256 of its nonce, which names the stored challenge).
 */
function particular(p: Planted): string[] {
  const parts = (p.value.includes('.') ? p.value.split('.').slice(1) : [p.value]).flatMap((part) => part.split(SPKI_P256_PREFIX));
  const out = new Set<string>();
  for (const part of parts) {
    if (part.length === 0) continue;
    out.add(part);
    if (p.kind !== 'token' && p.kind !== 'verdictToken') for (const other of reencodings(part)) out.add(other);
  }
  return [...out];
}

/** Where each planted value shows in the outputs that do not exist to give it. */
function leaks(found: Output[], values: Planted[] = planted): string[] {
  // Every WINDOW-long run of every output, once: a value's runs are looked up, not searched for.
  const runs = new Map<string, Set<number>>();
  found.forEach((o, i) => {
    for (let at = 0; at + WINDOW <= o.text.length; at++) {
      const run = o.text.slice(at, at + WINDOW);
      let where = runs.get(run);
      if (!where) runs.set(run, (where = new Set()));
      where.add(i);
    }
  });
  // One line per output and value: where it shows first.
  const out = new Map<string, string>();
  const report = (i: number, p: Planted, how: string) => {
    const where = `${found[i].name}: ${p.kind} ${p.name}`;
    if (!found[i].allows.includes(p.kind) && !out.has(where)) out.set(where, `${where} (${how})`);
  };
  for (const p of values) {
    found.forEach((o, i) => {
      if (o.text.includes(p.value)) report(i, p, 'whole');
    });
    for (const piece of particular(p)) {
      if (piece.length < WINDOW) {
        if (piece.length >= 8) found.forEach((o, i) => o.text.includes(piece) && report(i, p, `"${piece}"`));
        continue;
      }
      for (let at = 0; at + WINDOW <= piece.length; at++) {
        const where = runs.get(piece.slice(at, at + WINDOW));
        if (where) for (const i of where) report(i, p, `${WINDOW} characters at ${at} of ${piece === p.value ? 'it' : 'a part of it'}`);
      }
    }
  }
  return [...out.values()].sort();
}

/** An EC public key as the uncompressed point App Attest hashes into its key id. */
function rawPoint(key: KeyObject): Buffer {
  const jwk = key.export({ format: 'jwk' });
  return Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
}

it('shows no token, key, nonce, App Attest key id or verdict token in any output not made to give it', async () => {
  const appId = (await h.newApp('scale')).appId;
  const admin = (await h.newKey(appId, ['rules:read', 'rules:write', 'builds:read'])).key;
  const device = (await h.newKey(appId, ['attest:verify'])).key;
  const noScope = (await h.newKey(appId, ['events:ingest'])).key;
  const stubApp = (await h.newApp('scale')).appId;
  const stubDevice = (await h.newKey(stubApp, ['attest:verify'])).key;
  const staff = await h.newStaff('admin');

  const pi = playIntegrityKeys();
  plant('decryptionKey', 'the decryption key', pi.config.decryptionKey);
  plant('verificationKey', 'the verification key', pi.config.verificationKey);
  const stranger = playIntegrityKeys();
  plant('decryptionKey', "a stranger's decryption key", stranger.config.decryptionKey);

  /** A response's body, collected; `allows`: what the answer exists to give, when it succeeds (a refusal gives nothing). */
  const read = async (name: string, res: Response | Promise<Response>, allows: Kind[] = []): Promise<{ status: number; text: string; body: any }> => {
    const r = await res;
    const text = collect(`${name} (${r.status})`, await r.text(), r.ok ? allows : []);
    let body: unknown = null;
    try {
      body = JSON.parse(text);
    } catch {
      body = null;
    }
    return { status: r.status, text, body };
  };
  const configure = (name: string, body: unknown, allows: Kind[] = ['verificationKey']) =>
    read(`PUT attestation: ${name}`, h.api(`/v1/apps/${appId}/attestation`, { method: 'PUT', headers: json(admin), body: JSON.stringify(body) }), allows);
  const verify = (name: string, body: unknown, key = device, headers: Record<string, string> = {}) =>
    read(`verify: ${name}`, h.api('/v1/attest/verify', { method: 'POST', headers: { ...json(key), ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) }), ['verdictToken', 'keyId']);
  const challenge = async (name: string): Promise<string> => {
    const res = await read(`challenge: ${name}`, h.api('/v1/attest/challenges', { method: 'POST', headers: bearer(device) }), ['nonce']);
    expect(res.status).toBe(201);
    return plant('nonce', `the challenge for ${name}`, res.body.nonce);
  };
  /** A challenge the service did not issue, as a real fixture needs one. */
  const plantChallenge = async (nonce: string): Promise<void> => {
    const now = h.clock.now();
    await h.deps.db.collection('attest_challenges').deleteOne({ _id: challengeIdOf(nonce) as never });
    await h.deps.repos.attestChallenges.insert({ _id: challengeIdOf(nonce), appId, createdAt: now, expiresAt: new Date(now.getTime() + 60_000), usedAt: null, purgeAt: new Date(now.getTime() + 3_600_000) });
  };
  const graphql = (name: string, query: string, variables?: unknown, allows: Kind[] = []) =>
    read(`GraphQL ${name}`, h.api('/graphql', { method: 'POST', headers: json(staff), body: JSON.stringify({ query, variables }) }), allows);
  const verdictOf = (name: string, body: any) => {
    if (body?.verdictToken) plant('verdictToken', `the verdict token of ${name}`, body.verdictToken);
    return body;
  };

  // Configurations whose keys do not parse: 422 naming the fields, never the keys.
  const badDecryption = plant('decryptionKey', 'a decryption key of 31 bytes', randomBytes(31).toString('base64'));
  const badVerification = plant('verificationKey', 'a verification key that is no key', randomBytes(91).toString('base64'));
  const refused = await configure('keys that do not parse', { android: { packageName: PACKAGE, playIntegrity: { decryptionKey: badDecryption, verificationKey: badVerification } } });
  expect(refused.status).toBe(422);
  expect(refused.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(expect.arrayContaining(['/android/playIntegrity/decryptionKey', '/android/playIntegrity/verificationKey']));
  const swapped = await configure('the keys swapped', { android: { packageName: PACKAGE, playIntegrity: { decryptionKey: pi.config.verificationKey, verificationKey: pi.config.decryptionKey } } });
  expect(swapped.status).toBe(422);
  const tooLong = await configure('a decryption key over its limit', { android: { packageName: PACKAGE, playIntegrity: { decryptionKey: plant('decryptionKey', 'a decryption key of 300 characters', randomBytes(225).toString('base64')), verificationKey: pi.config.verificationKey } } });
  expect(tooLong.status).toBe(422);
  const extra = await configure('a field the contract does not know', { android: { packageName: PACKAGE, playIntegrity: { ...pi.config, decryptionkey: pi.config.decryptionKey } } });
  expect(extra.status).toBe(422);

  // The configuration used below: Play Integrity, key attestation and App Attest (the real iPhone's app).
  const configured = await configure('genuine', {
    android: { packageName: PACKAGE, playIntegrity: pi.config, keyAttestation: true },
    ios: { teamId: APPLE.teamId, bundleId: APPLE.bundleId, environment: APPLE.environment },
  });
  expect(configured.status).toBe(200);
  expect((await read('GET attestation', h.api(`/v1/apps/${appId}/attestation`, { headers: bearer(admin) }), ['verificationKey'])).status).toBe(200);
  const signerHex = createHash('sha256').update('the signing certificate of the secrets test').digest('hex');
  expect((await read('record a signer', h.api(`/v1/apps/${appId}/signers`, { method: 'POST', headers: json(admin), body: JSON.stringify({ package: PACKAGE, sha256: signerHex, reason: 'the secrets test' }) }))).status).toBe(201);

  const genuine = (nonce: string, options: Parameters<typeof mintClassicToken>[2] = {}, overrides: Record<string, unknown> = {}) =>
    mintClassicToken(pi, { requestDetails: { requestPackageName: PACKAGE, nonce }, appIntegrity: { packageName: PACKAGE, certificateSha256Digest: [signerDigest(signerHex)] }, ...overrides }, { now: h.clock.now(), ...options });

  // Play Integrity: a genuine token (valid: the versionCode names no registered build).
  {
    const nonce = await challenge('a genuine token');
    const token = plant('token', 'a genuine Play Integrity token', await genuine(nonce));
    const res = await verify('a genuine Play Integrity token', { token, nonce, platform: 'android' });
    expect(verdictOf('a genuine token', res.body)).toMatchObject({ valid: true, verdict: 'suspicious', reasons: ['version_unregistered'], engine: 'play_integrity' });
    // Replayed: the nonce is spent.
    const again = await verify('the genuine token replayed', { token, nonce, platform: 'android' });
    expect(verdictOf('the replay', again.body).reasons).toEqual(['nonce_replayed']);
  }
  // Refused in every way a Play Integrity token can be.
  const piCases: Array<[string, (nonce: string) => Promise<string>, string]> = [
    ['a token for another nonce', async () => genuine(plant('nonce', 'the nonce a token attests instead', randomBytes(32).toString('base64url'))), 'challenge_mismatch'],
    ['a token for another app (its decryption key)', async (nonce) => genuine(nonce, { encryptWith: stranger.aesKey }), 'decrypt_failed'],
    ['a token signed by a stranger', async (nonce) => genuine(nonce, { signWith: stranger.signingKey }), 'signature_invalid'],
    ['a token of another package', async (nonce) => mintClassicToken(pi, { requestDetails: { nonce } }, { now: h.clock.now() }), 'package_mismatch'],
    ['a token whose JWS is not JSON', async () => mintClassicToken(pi, {}, { rawPayload: `{"nonce":"${randomBytes(24).toString('base64url')}"` }), 'token_malformed'],
    ['a JWE around no JWS', async () => encryptClassic(randomBytes(96).toString('base64url'), pi.aesKey), 'token_malformed'],
    ['a JWE naming another algorithm', async (nonce) => genuine(nonce, { jweHeader: { alg: 'dir', enc: 'A256GCM' }, encryptWith: pi.aesKey }), 'decrypt_failed'],
    ['five segments of noise', async () => Array.from({ length: 5 }, () => randomBytes(40).toString('base64url')).join('.'), 'token_malformed'],
    ['a stale token', async (nonce) => genuine(nonce, { now: new Date(h.clock.now().getTime() - 3_600_000) }), 'timestamp_stale'],
  ];
  for (const [name, make, reason] of piCases) {
    const nonce = await challenge(name);
    const token = await make(nonce);
    plant('token', name, token);
    const res = await verify(name, { token, nonce, platform: 'android' });
    expect({ name, status: res.status }).toEqual({ name, status: 200 });
    expect({ name, verdict: verdictOf(name, res.body).verdict }).toEqual({ name, verdict: 'untrusted' });
    expect({ name, reasons: res.body.reasons }).toEqual({ name, reasons: expect.arrayContaining([reason]) });
  }
  // Unknown nonce: refused before the token is read.
  {
    const token = plant('token', 'a token with an unknown nonce', await genuine('x'));
    const nonce = plant('nonce', 'a nonce never issued', randomBytes(32).toString('base64url'));
    expect(verdictOf('unknown nonce', (await verify('an unknown nonce', { token, nonce, platform: 'android' })).body).reasons).toEqual(['nonce_unknown']);
  }
  // Key attestation: a chain that is no DER, and text that is no base64url.
  for (const [name, token] of [['a chain that is no DER', randomBytes(300).toString('base64url')], ['a chain that is no base64url', `${randomBytes(60).toString('base64')}!!`]] as const) {
    const nonce = await challenge(name);
    plant('token', name, token);
    expect(verdictOf(name, (await verify(name, { token, nonce, platform: 'android' })).body).reasons).toEqual(['token_malformed']);
  }

  // App Attest: the real iPhone's attestation at the time it was made (registers its key), then a fresh key's
  // assertions, accepted, replayed and forged; an attestation object of noise; a key id the app never registered.
  {
    h.clock.set(new Date(APPLE.verifyAt));
    const token = plant('token', 'a real App Attest attestation', Buffer.from(APPLE.attestation, 'base64').toString('base64url'));
    const nonce = plant('nonce', 'the real attestation\'s client data', APPLE.clientDataUtf8);
    plant('keyId', 'the real iPhone\'s key id', APPLE.keyId);
    await plantChallenge(nonce);
    expect(verdictOf('the real attestation', (await verify('a real App Attest attestation', { token, nonce, platform: 'ios' })).body)).toMatchObject({ verdict: 'trusted', keyId: APPLE.keyId });
    h.clock.set(new Date());
    await plantChallenge(nonce);
    expect(verdictOf('the real attestation today', (await verify('a real App Attest attestation today', { token, nonce, platform: 'ios' })).body).reasons).toEqual(['certificate_expired']);
  }
  {
    const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const keyId = plant('keyId', 'a fresh App Attest key id', createHash('sha256').update(rawPoint(publicKey)).digest('base64'));
    await h.deps.repos.appAttestKeys.register({ appId, keyId, publicKeySpki: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'), environment: 'development', counter: 0, attestedAt: h.clock.now(), lastAssertedAt: null });
    const assert = (nonce: string, counter: number, key = privateKey) => {
      const rpIdHash = createHash('sha256').update(`${APPLE.teamId}.${APPLE.bundleId}`).digest();
      const authenticatorData = Buffer.concat([rpIdHash, Buffer.from([0x40]), Buffer.from([0, 0, 0, counter])]);
      const signed = createHash('sha256').update(authenticatorData).update(createHash('sha256').update(nonce, 'utf8').digest()).digest();
      const signature = sign('sha256', signed, key);
      return Buffer.from(encodeCbor(new Map<string, Uint8Array>([['signature', new Uint8Array(signature)], ['authenticatorData', new Uint8Array(authenticatorData)]]))).toString('base64url');
    };
    const n1 = await challenge('an App Attest assertion');
    const accepted = await verify('an App Attest assertion', { token: plant('token', 'an App Attest assertion', assert(n1, 1)), nonce: n1, platform: 'ios', keyId });
    expect(verdictOf('an assertion', accepted.body)).toMatchObject({ verdict: 'trusted', keyId });
    const n2 = await challenge('an assertion whose counter was seen');
    expect(verdictOf('a replayed counter', (await verify('an assertion whose counter was seen', { token: plant('token', 'an assertion whose counter was seen', assert(n2, 1)), nonce: n2, platform: 'ios', keyId })).body).reasons).toEqual(['counter_replayed']);
    const n3 = await challenge('a forged assertion');
    const forger = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    expect(verdictOf('a forged assertion', (await verify('a forged assertion', { token: plant('token', 'a forged assertion', assert(n3, 2, forger)), nonce: n3, platform: 'ios', keyId })).body).reasons).toEqual(['signature_invalid']);
    const n4 = await challenge('an assertion by an unregistered key');
    const unknownKey = plant('keyId', 'a key id never registered', randomBytes(32).toString('base64'));
    expect(verdictOf('an unknown key', (await verify('an assertion by an unregistered key', { token: plant('token', 'an assertion by an unregistered key', assert(n4, 3)), nonce: n4, platform: 'ios', keyId: unknownKey })).body).reasons).toEqual(['key_unknown']);
    const n5 = await challenge('an attestation object of noise');
    expect(verdictOf('noise', (await verify('an attestation object of noise', { token: plant('token', 'an attestation object of noise', randomBytes(200).toString('base64url')), nonce: n5, platform: 'ios' })).body).reasons).toEqual(['token_malformed']);
  }

  // Refused before any engine: by the contract, the body parser, the credential, the Idempotency-Key.
  {
    const nonce = await challenge('the refusals');
    const token = plant('token', 'a token sent with refused requests', await genuine(nonce));
    const notJson = await verify('a body that is not JSON', `{"token":"${token}","nonce":"${nonce}","platform":"android"`);
    expect(notJson.status).toBe(400);
    const overLimit = plant('token', 'a token over its 8192-character limit', randomBytes(6200).toString('base64url').slice(0, 8193));
    const long = await verify('a token over its limit', { token: overLimit, nonce, platform: 'android' });
    expect(long.status).toBe(422);
    expect(long.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/token']);
    const huge = plant('token', 'a token making the body larger than 1 MB', randomBytes(800_000).toString('base64url'));
    expect((await verify('a body over the body limit', { token: huge, nonce, platform: 'android' })).status).toBe(400);
    expect((await verify('a platform the contract does not know', { token, nonce, platform: 'windows' })).status).toBe(422);
    expect((await verify('a field the contract does not know', { token, nonce, platform: 'android', tokenCopy: token, nonceCopy: nonce })).status).toBe(422);
    expect((await verify('a key id that is no key id', { token, nonce, platform: 'ios', keyId: `${token.slice(0, 40)}!` })).status).toBe(422);
    expect((await verify('a token that is no string', { token: [token], nonce: { nonce }, platform: 'android' })).status).toBe(422);
    expect((await read('verify as text/plain', h.api('/v1/attest/verify', { method: 'POST', headers: { ...bearer(device), 'content-type': 'text/plain' }, body: JSON.stringify({ token, nonce, platform: 'android' }) }))).status).toBeGreaterThanOrEqual(400);
    expect((await verify('a credential that is no key', { token, nonce, platform: 'android' }, `svc_live_${randomBytes(8).toString('hex')}_${randomBytes(16).toString('hex')}`)).status).toBe(401);
    expect((await verify('a key without attest:verify', { token, nonce, platform: 'android' }, noScope)).status).toBe(403);
    const idem = { 'idempotency-key': `attest-${randomBytes(6).toString('hex')}` };
    expect(verdictOf('an idempotent verification', (await verify('with an Idempotency-Key', { token, nonce, platform: 'android' }, device, idem)).body).verdict).toBe('suspicious');
    expect((await verify('the Idempotency-Key replayed', { token, nonce, platform: 'android' }, device, idem)).status).toBe(200);
    const other = await challenge('the Idempotency-Key reused');
    expect((await verify('the Idempotency-Key reused with another body', { token: plant('token', 'a token sent with a reused Idempotency-Key', await genuine(other)), nonce: other, platform: 'android' }, device, idem)).status).toBe(422);
    // An app without a configuration keeps the stub, which reads the token's JWS payload.
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const stubNonce = plant('nonce', 'the stub\'s nonce', randomBytes(32).toString('base64url'));
    const stubToken = plant('token', 'a token for the stub', `${b64({ alg: 'ES256' })}.${b64({ nonce: stubNonce, pad: randomBytes(24).toString('base64url') })}.${randomBytes(64).toString('base64url')}`);
    expect((await verify('the stub', { token: stubToken, nonce: stubNonce, platform: 'android' }, stubDevice)).body.engine).toBe('stub');
  }

  // GraphQL, as a staff admin: a device's operation refused, variables that do not fit their types, keys that do
  // not parse, a document that does not parse, and a configuration that works.
  {
    const nonce = await challenge('GraphQL');
    const token = plant('token', 'a token sent over GraphQL', await genuine(nonce));
    const VERIFY = 'mutation Verify($input: AttestInput!) { verifyAttest(input: $input) { valid verdict reasons engine keyId verdictToken } }';
    const CONFIGURE = 'mutation Configure($appId: ID!, $input: AttestationConfigInput!) { configureAttestation(appId: $appId, input: $input) { android { packageName playIntegrity { decryptionKey verificationKey } } ios { teamId } } }';
    const staffVerify = await graphql('verifyAttest by staff', VERIFY, { input: { token, nonce, platform: 'android' } });
    expect(staffVerify.body.errors[0].extensions.code).toBe('insufficient_scope');
    // Refusals name the variable, where in it and why, never what was sent.
    const message = async (...args: Parameters<typeof graphql>) => (await graphql(...args)).body.errors[0].message;
    expect(await message('verifyAttest without a platform', VERIFY, { input: { token, nonce } })).toBe('Variable "$input" got invalid value; Field "platform" of required type "Platform!" was not provided.');
    expect(await message('verifyAttest with a field its input does not have', VERIFY, { input: { token, nonce, platform: 'android', keyid: APPLE.keyId } })).toMatch(/^Variable "\$input" got invalid value; Field "keyid" is not defined by type "AttestInput"\./);
    // A field name that imitates where graphql-js names the refused value: the values before it are cut all the same.
    expect(await message('verifyAttest with a field name that imitates a path', VERIFY, { input: { token, nonce, platform: 'android', 'x at "input.token"; y': nonce } })).toMatch(/^Variable "\$input" got invalid value; Field "x at "input.token"; y" is not defined by type "AttestInput"\.$/);
    expect(await message('verifyAttest with a platform that does not exist', VERIFY, { input: { token, nonce, platform: 'windows' } })).toBe('Variable "$input" got invalid value at "input.platform"; The value does not exist in "Platform" enum.');
    expect(await message('verifyAttest with an input that is no object', VERIFY, { input: token })).toBe('Variable "$input" got invalid value; Expected type "AttestInput" to be an object.');
    expect(await message('verifyAttest with a document that does not parse', `mutation { verifyAttest(input: { token: "${token}" "${nonce}" platform: android }) { valid } }`)).toBe('Syntax Error: Expected Name, found String.');
    expect(await message('verifyAttest with a literal of the wrong type', `mutation { verifyAttest(input: { token: "${token}", nonce: "${nonce}", platform: android, keyId: ["${token}"] }) { valid } }`)).toBe('String cannot represent a non string value.');
    const keys422 = await graphql('configureAttestation with keys that do not parse', CONFIGURE, { appId, input: { android: { packageName: PACKAGE, playIntegrity: { decryptionKey: badDecryption, verificationKey: badVerification } } } });
    expect(keys422.body.errors[0].extensions.code).toBe('validation_failed');
    expect(await message('configureAttestation without a package name', CONFIGURE, { appId, input: { android: { playIntegrity: pi.config, keyAttestation: true } } })).toBe('Variable "$input" got invalid value at "input.android"; Field "packageName" of required type "String!" was not provided.');
    expect(await message('configureAttestation with a field its input does not have', CONFIGURE, { appId, input: { android: { packageName: PACKAGE, playIntegrity: { ...pi.config, note: 'from Play Console' } } } })).toBe('Variable "$input" got invalid value at "input.android.playIntegrity"; Field "note" is not defined by type "PlayIntegrityConfigInput".');
    expect(await message('configureAttestation with a level that does not exist', CONFIGURE, { appId, input: { android: { packageName: PACKAGE, playIntegrity: pi.config, minDeviceIntegrity: 'MEETS_EVERYTHING' } } })).toBe('Variable "$input" got invalid value at "input.android.minDeviceIntegrity"; The value does not exist in "DeviceIntegrityLevel" enum.');
    await graphql('configureAttestation of an app that does not exist', CONFIGURE, { appId: 'app_doesnotexist', input: { android: { packageName: PACKAGE, playIntegrity: pi.config } } });
    const ok = await graphql('configureAttestation', CONFIGURE, { appId, input: { android: { packageName: PACKAGE, playIntegrity: pi.config, keyAttestation: true }, ios: { teamId: APPLE.teamId, bundleId: APPLE.bundleId, environment: APPLE.environment } } }, ['verificationKey']);
    expect(ok.body.data.configureAttestation.android.playIntegrity.decryptionKey).toBe('set');
  }

  // What the service keeps and counts: the audit trail (REST and its collection), /metrics, every collection.
  collect('REST audit trail', await (await h.api(`/v1/apps/${appId}/audit-events?limit=100`, { headers: bearer(admin) })).text());
  await graphql('audit trail', `{ app(id: "${appId}") { auditEvents(first: 50) { nodes { action subject reason actor resource } } } auditLogConnection(first: 50) { nodes { action subject reason actor resource targetAppId } } }`);
  const audit = await h.deps.db.collection('audit_events').find({}).toArray();
  collect('audit_events collection', JSON.stringify(audit));
  const metricsRes = await h.api('/metrics', { headers: bearer(METRICS_TOKEN) });
  expect(metricsRes.status).toBe(200);
  const metricsText = collect('/metrics', await metricsRes.text());
  collect('JWKS', await (await h.api('/v1/attest/jwks')).text());
  for (const { name } of await h.deps.db.listCollections().toArray()) {
    if (name === 'audit_events') continue;
    // Stored by design: the verification key (attestation_configs), App Attest key ids (app_attest_keys), verify
    // answers an Idempotency-Key replays (idempotency_keys). Never a token, the decryption key or a nonce.
    collect(`${name} collection`, JSON.stringify(await h.deps.db.collection(name).find({}).toArray()), ['verificationKey', 'keyId', 'verdictToken']);
  }
  const logText = collect('logs', logs.join(''));

  // The outputs were read: the operations ran, logged, counted and audited.
  for (const operation of ['verifyAttest', 'createAttestChallenge', 'configureAttestation', 'getAttestationConfig', 'listAuditEvents']) expect(logText).toContain(`"operation":"${operation}"`);
  expect(logText).toContain('"api":"graphql"');
  for (const reason of ['none', 'version_unregistered', 'nonce_replayed', 'decrypt_failed', 'signature_invalid', 'token_malformed', 'counter_replayed', 'key_unknown']) {
    expect(metricsText).toMatch(new RegExp(`shieldgate_attest_verdicts_total\\{[^}]*reason="${reason}"`));
  }
  expect(audit.filter((a) => a.action === 'attestation.configured').length).toBeGreaterThanOrEqual(2);
  expect(planted.filter((p) => p.kind === 'verdictToken').length).toBeGreaterThan(10);

  expect(leaks(outputs)).toEqual([]);
});

it('finds a planted value in an output, whole or in part or re-encoded, and names it: the grep above is not vacuous', () => {
  expect(outputs.length).toBeGreaterThan(40);
  const logText = outputs.find((o) => o.name === 'logs')!.text;
  const kinds: Kind[] = ['token', 'decryptionKey', 'verificationKey', 'nonce', 'verdictToken', 'keyId'];
  for (const kind of kinds) {
    const p = planted.find((x) => x.kind === kind)!;
    const piece = particular(p)[0];
    const middle = piece.length > WINDOW ? piece.slice(Math.floor((piece.length - WINDOW) / 2), Math.floor((piece.length - WINDOW) / 2) + WINDOW) : piece;
    const bytes = Buffer.from(piece.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    const reencoded = kind !== 'token' && kind !== 'verdictToken' && reencodings(piece).length > 0;
    for (const [how, text] of [
      ['whole', p.value],
      [`${WINDOW} characters from its middle`, middle],
      ...(reencoded ? [['as hex', bytes.toString('hex')] as const] : []),
    ] as const) {
      const doctored: Output = { name: 'logs, doctored', text: `${logText.slice(0, 20_000)}{"msg":"x","v":${JSON.stringify(text)}}${logText.slice(20_000, 40_000)}`, allows: [] };
      expect({ kind, how, found: leaks([doctored], [p]) }).toEqual({ kind, how, found: [expect.stringContaining(`logs, doctored: ${kind} ${p.name} (`)] });
      // The same text in an output made to give this kind is allowed.
      expect(leaks([{ ...doctored, allows: [kind] }], [p])).toEqual([]);
    }
  }
  // Outputs that hold a value by design are found holding it when nothing is allowed in them.
  const strict = (name: RegExp) => outputs.filter((o) => name.test(o.name)).map((o) => ({ ...o, allows: [] as Kind[] }));
  expect(leaks(strict(/^challenge: a genuine token/)).join('\n')).toMatch(/nonce the challenge for a genuine token \(whole\)/);
  expect(leaks(strict(/^verify: a genuine Play Integrity token \(200\)/)).join('\n')).toMatch(/verdictToken the verdict token of a genuine token \(whole\)/);
  expect(leaks(strict(/^verify: an App Attest assertion \(200\)/)).join('\n')).toMatch(/keyId a fresh App Attest key id \(whole\)/);
  expect(leaks(strict(/^PUT attestation: genuine \(200\)/)).join('\n')).toMatch(/verificationKey the verification key \(whole\)/);
  expect(leaks(strict(/^attestation_configs collection/)).join('\n')).toMatch(/verificationKey the verification key/);
});
