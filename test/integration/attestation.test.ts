// Protects: device attestation with real engines, end to end over HTTP (docs/attestation.md). An app without a
// configuration keeps the spec's stub answer exactly. PUT/GET /v1/apps/{id}/attestation: the decryption key is
// sealed and shown as `set`, never echoed (not even in a 422), audited without keys; scopes and other apps refused.
// Challenges are single use across two instances; unknown, expired and used nonces are refused before any token is
// read. Play Integrity: a genuine token is trusted and names the registered build its versionCode says, a clone
// signed by a stranger is signer_mismatch; the verdict token verifies with the snippet of docs/attestation.md as
// written, against GET /v1/attest/jwks. App Attest: a real iPhone attestation registers its key at the time it was
// made, its real assertion is accepted once, and the same counter sent through two instances at once is accepted
// exactly once. Key attestation: a real Pixel chain names the package's recorded signer and, once a build with its
// versionCode is registered and scanned, that build.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { execFile } from 'node:child_process';
import { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { encode as encodeCbor } from 'cbor2';
import { readFileSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { MongoClient } from 'mongodb';
import { startHarness, bearer, json, type Harness } from '../support/harness';
import { createDeps, closeDeps } from '../../src/bootstrap';
import { createHttpApp } from '../../src/app';
import { createLogger } from '../../src/core/logger';
import { challengeIdOf } from '../../src/data/attest-challenges-repo';
import { CLASSIC_DEFAULTS, mintClassicToken, playIntegrityKeys, signerDigest } from '../support/play-integrity-tokens';
import { androidKeyChain } from '../fixtures/android-key-corpus';
import { androidManifest, buildApk, cleanupFixtures } from '../fixtures/build-packages';
import { uploadPackage, waitForStaticScan } from './scans-support';

const run = promisify(execFile);

/** A response's JSON, as the tests read it. */
const jsonOf = async (res: Response | Promise<Response>): Promise<any> => (await res).json();

/** An EC public key as the uncompressed point App Attest hashes into its key id. */
function rawPoint(key: KeyObject): Buffer {
  const jwk = key.export({ format: 'jwk' });
  return Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
}

let h: Harness;
let appId: string;
let admin: string; // rules:read, rules:write, builds:write, builds:read (a release key)
let device: string; // attest:verify
let otherAppKey: string;
let stubDevice: string; // attest:verify of an app that never configures attestation

type Instance = { baseUrl: string; close(): Promise<void> };
let second: Instance;

/** A second instance on the same database: its own HTTP app and deps. */
async function secondInstance(): Promise<Instance> {
  const mongo = new MongoClient(process.env.TEST_MONGODB_URI!);
  await mongo.connect();
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const deps = await createDeps({ ...h.config }, { clock: h.clock, mongo, logger: createLogger('silent') });
  const { app, stop } = await createHttpApp(deps);
  server.on('request', app);
  return {
    baseUrl,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await stop();
      await closeDeps(deps);
    },
  };
}

beforeAll(async () => {
  h = await startHarness();
  appId = (await h.newApp('scale')).appId;
  admin = (await h.newKey(appId, ['rules:read', 'rules:write', 'builds:write', 'builds:read', 'scans:read', 'threats:read'], 'live', { releaseBuilds: true })).key;
  device = (await h.newKey(appId, ['attest:verify', 'events:ingest'])).key;
  const other = await h.newApp('scale');
  otherAppKey = (await h.newKey(other.appId, ['rules:read', 'rules:write'])).key;
  const stubApp = await h.newApp('scale');
  stubDevice = (await h.newKey(stubApp.appId, ['attest:verify'])).key;
  second = await secondInstance();
});
afterAll(async () => {
  await second.close();
  await h.close();
  await cleanupFixtures();
});

const verify = (body: Record<string, unknown>, key = device, base = h.baseUrl) =>
  fetch(`${base}/v1/attest/verify`, { method: 'POST', headers: json(key), body: JSON.stringify(body) });

async function challenge(key = device): Promise<string> {
  const res = await h.api('/v1/attest/challenges', { method: 'POST', headers: bearer(key) });
  expect(res.status).toBe(201);
  const body = await jsonOf(res);
  expect(body.nonce).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect(new Date(body.expiresAt).getTime() - h.clock.now().getTime()).toBe(5 * 60_000);
  return body.nonce;
}

/** A challenge the service did not issue, as a real fixture needs one (its nonce was chosen by whoever captured it). */
async function plantChallenge(nonce: string): Promise<void> {
  const now = h.clock.now();
  const col = h.deps.db.collection('attest_challenges');
  await col.deleteOne({ _id: challengeIdOf(nonce) as never });
  await h.deps.repos.attestChallenges.insert({ _id: challengeIdOf(nonce), appId, createdAt: now, expiresAt: new Date(now.getTime() + 60_000), usedAt: null, purgeAt: new Date(now.getTime() + 3_600_000) });
}

const configure = (body: unknown, key = admin, app = appId) =>
  h.api(`/v1/apps/${app}/attestation`, { method: 'PUT', headers: json(key), body: JSON.stringify(body) });

const pi = playIntegrityKeys();
const PACKAGE = 'com.example.attested';
const APPLE = JSON.parse(readFileSync(path.join(__dirname, '../fixtures/attestation/apple-app-attest/veehaitch-ios-14.2.json'), 'utf8'));
const PIXEL = androidKeyChain('google-rkp-pixel7pro-2023');

describe('an app without a configuration', () => {
  it('is remembered as such by the instance only until a configuration is put on it', async () => {
    const app = (await h.newApp('scale')).appId;
    const appAdmin = (await h.newKey(app, ['rules:write'])).key;
    const appDevice = (await h.newKey(app, ['attest:verify'])).key;
    const plain = 'nonce-cached-1';
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const stub = await jsonOf(verify({ token: `${b64({ alg: 'ES256' })}.${b64({ nonce: plain })}.${b64('s')}`, nonce: plain, platform: 'android' }, appDevice));
    expect(stub.engine).toBe('stub');
    expect((await configure({ android: { packageName: PACKAGE, keyAttestation: true } }, appAdmin, app)).status).toBe(200);
    // The next verification on this instance is the configured engine's, not the stub remembered a moment ago.
    const after = await jsonOf(verify({ token: 'not-a-chain', nonce: 'never-issued', platform: 'android' }, appDevice));
    expect(after).toMatchObject({ engine: 'key_attestation', reasons: ['nonce_unknown'] });
  });

  it('keeps the spec stub answer exactly, no challenge needed', async () => {
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const token = `${b64({ alg: 'ES256' })}.${b64({ nonce: 'nonce-1234' })}.${b64('s')}`;
    const res = await verify({ token, nonce: 'nonce-1234', platform: 'android' }, stubDevice);
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toEqual({ valid: true, verdict: 'trusted', reasons: [], engine: 'stub' });
  });
});

describe('configuration', () => {
  it('is refused without rules:write, for another app, and while none is set it is 404', async () => {
    expect((await h.api(`/v1/apps/${appId}/attestation`, { headers: bearer(admin) })).status).toBe(404);
    expect((await configure({ ios: { teamId: 'ABCDE12345', bundleId: 'a.b', environment: 'production' } }, device)).status).toBe(403);
    expect((await configure({ ios: { teamId: 'ABCDE12345', bundleId: 'a.b', environment: 'production' } }, otherAppKey)).status).toBe(404);
  });

  it('answers 422 with pointers for keys that do not parse, never echoing them', async () => {
    const badKey = 'bm90LWEta2V5LWF0LWFsbC1qdXN0LXRleHQtdGhhdC1pcy1zZWNyZXQ=';
    const res = await configure({ android: { packageName: PACKAGE, playIntegrity: { decryptionKey: badKey, verificationKey: badKey } } });
    expect(res.status).toBe(422);
    const text = await res.text();
    expect(text).not.toContain(badKey);
    const pointers = JSON.parse(text).errors.map((e: { pointer: string }) => e.pointer);
    expect(pointers).toEqual(expect.arrayContaining(['/android/playIntegrity/decryptionKey', '/android/playIntegrity/verificationKey']));
  });

  it('stores the keys sealed, shows the decryption key as set, and audits which engines are on', async () => {
    const res = await configure({
      android: { packageName: PACKAGE, playIntegrity: pi.config, keyAttestation: true },
      ios: { teamId: APPLE.teamId, bundleId: APPLE.bundleId, environment: APPLE.environment },
    });
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(text).not.toContain(pi.config.decryptionKey);
    const body = JSON.parse(text);
    expect(body.android).toEqual({ packageName: PACKAGE, playIntegrity: { decryptionKey: 'set', verificationKey: pi.config.verificationKey }, keyAttestation: true, minDeviceIntegrity: 'MEETS_DEVICE_INTEGRITY', appSigningCertificates: null });
    const got = await h.api(`/v1/apps/${appId}/attestation`, { headers: bearer(admin) });
    expect(await jsonOf(got)).toEqual(body);
    const stored = JSON.stringify(await h.deps.db.collection('attestation_configs').findOne({ _id: appId as never }));
    expect(stored).not.toContain(pi.config.decryptionKey);
    const audit = await jsonOf(h.api(`/v1/apps/${appId}/audit-events?action=attestation.configured`, { headers: bearer(admin) }));
    expect(audit.data).toHaveLength(1);
    expect(JSON.stringify(audit.data)).not.toContain(pi.config.decryptionKey);
  });
});

describe('challenges', () => {
  it('are refused when unknown, expired or used, before the token is read', async () => {
    const token = await mintClassicToken(pi, {}, { now: h.clock.now() });
    const unknown = await jsonOf(verify({ token, nonce: 'not-a-challenge-of-this-app', platform: 'android' }));
    expect(unknown).toMatchObject({ valid: false, verdict: 'untrusted', reasons: ['nonce_unknown'], engine: 'play_integrity' });

    const used = await challenge();
    await verify({ token, nonce: used, platform: 'android' });
    expect((await jsonOf(verify({ token, nonce: used, platform: 'android' }))).reasons).toEqual(['nonce_replayed']);

    const expiring = await challenge();
    h.clock.advance(5 * 60_000);
    expect((await jsonOf(verify({ token, nonce: expiring, platform: 'android' }))).reasons).toEqual(['nonce_expired']);
  });

  it('are consumed once whichever instance sees them: of two at once, one is live', async () => {
    const nonce = await challenge();
    const token = 'AAAAAAAA'; // malformed either way: what counts is which call consumed the nonce
    const answers = await Promise.all([verify({ token, nonce, platform: 'android' }), verify({ token, nonce, platform: 'android' }, device, second.baseUrl)]);
    const reasons = (await Promise.all(answers.map((r) => jsonOf(r)))).map((b) => b.reasons[0]);
    expect(reasons.sort()).toEqual(['nonce_replayed', 'token_malformed']);
  });
});

describe('Play Integrity', () => {
  let buildId: string;
  let signer: string;

  beforeAll(async () => {
    // A release build of the package with versionCode 42: its scan records the package's signer and the code.
    const file = await buildApk({ manifest: androidManifest({ packageName: PACKAGE, versionCode: String(CLASSIC_DEFAULTS.versionCode) }), sign: 'release' });
    const uploaded = await uploadPackage(h, admin, file, 'android', '4.2.0');
    buildId = uploaded.id ?? uploaded.buildId;
    await waitForStaticScan(h, admin, buildId, 120_000);
    const signers = await jsonOf(h.api(`/v1/apps/${appId}/signers?package=${PACKAGE}`, { headers: bearer(admin) }));
    signer = signers.data[0].sha256;
  });

  const genuine = (nonce: string, digest = signerDigest(signer)) =>
    mintClassicToken(pi, { requestDetails: { requestPackageName: PACKAGE, nonce }, appIntegrity: { packageName: PACKAGE, certificateSha256Digest: [digest] } }, { now: h.clock.now() });

  it('trusts a genuine token, names the build its versionCode says, and the verdict token checks out with the documented snippet', async () => {
    const nonce = await challenge();
    const res = await verify({ token: await genuine(nonce), nonce, platform: 'android' });
    const body = await jsonOf(res);
    expect(body).toMatchObject({ valid: true, verdict: 'trusted', reasons: [], engine: 'play_integrity', keyId: null, build: { id: buildId, version: '4.2.0' } });

    // The snippet of docs/attestation.md, as written, run by Node against this instance's JWKS.
    const doc = readFileSync(path.join(__dirname, '../../docs/attestation.md'), 'utf8');
    const snippet = /<!-- verify-verdict[^>]*-->\n```js\n([\s\S]*?)```/.exec(doc)![1];
    const dir = path.join(__dirname, '../artifacts');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'verify-verdict.mjs'), snippet);
    const script = `import { checkVerdict } from ${JSON.stringify(path.join(dir, 'verify-verdict.mjs'))}; const p = await checkVerdict(process.argv[1], process.argv[2], process.argv[3]); console.log(JSON.stringify(p));`;
    const checked = await run(process.execPath, ['--input-type=module', '-e', script, body.verdictToken, appId, nonce], { env: { ...process.env, SHIELDGATE_URL: h.baseUrl } });
    expect(JSON.parse(checked.stdout)).toMatchObject({ sub: appId, aud: appId, verdict: 'trusted', engine: 'play_integrity', platform: 'android', buildId });
    // Another nonce: the snippet refuses the token.
    await expect(run(process.execPath, ['--input-type=module', '-e', script, body.verdictToken, appId, 'another-nonce'], { env: { ...process.env, SHIELDGATE_URL: h.baseUrl } })).rejects.toThrow(/another request/);
  });

  it('calls a clone signed by anyone else signer_mismatch', async () => {
    const nonce = await challenge();
    const stranger = signerDigest('ab'.repeat(32));
    const body = await jsonOf(verify({ token: await genuine(nonce, stranger), nonce, platform: 'android' }));
    expect(body).toMatchObject({ valid: false, verdict: 'untrusted', reasons: ['signer_mismatch'], build: null });
  });

  it('calls a version no registered build has suspicious', async () => {
    const nonce = await challenge();
    const token = await mintClassicToken(pi, { requestDetails: { requestPackageName: PACKAGE, nonce }, appIntegrity: { packageName: PACKAGE, certificateSha256Digest: [signerDigest(signer)], versionCode: '43' } }, { now: h.clock.now() });
    const body = await jsonOf(verify({ token, nonce, platform: 'android' }));
    expect(body).toMatchObject({ valid: true, verdict: 'suspicious', reasons: ['version_unregistered'], build: null });
  });

  it('compares with the app signing certificates the app gave (Play App Signing), not the upload key the scans recorded', async () => {
    const appSigning = 'cd'.repeat(32);
    const asPlayConsoleShowsIt = appSigning.toUpperCase().match(/../g)!.join(':');
    const ios = { teamId: APPLE.teamId, bundleId: APPLE.bundleId, environment: APPLE.environment };
    const put = (appSigningCertificates: unknown) => configure({ android: { packageName: PACKAGE, playIntegrity: pi.config, keyAttestation: true, appSigningCertificates }, ios });
    const refused = await put(['not-a-fingerprint', appSigning]);
    expect(refused.status).toBe(422);
    expect((await jsonOf(refused)).errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/android/appSigningCertificates/0']);
    const set = await put([asPlayConsoleShowsIt]);
    expect(set.status).toBe(200);
    expect((await jsonOf(set)).android.appSigningCertificates).toEqual([appSigning]);
    try {
      const nonce = await challenge();
      const installed = await jsonOf(verify({ token: await genuine(nonce, signerDigest(appSigning)), nonce, platform: 'android' }));
      expect(installed).toMatchObject({ verdict: 'trusted', reasons: [], build: { id: buildId } });
      const again = await challenge();
      expect((await jsonOf(verify({ token: await genuine(again), nonce: again, platform: 'android' }))).reasons).toEqual(['signer_mismatch']);
    } finally {
      expect((await put(null)).status).toBe(200);
    }
  });
});

describe('App Attest, real iPhone data', () => {
  const token = Buffer.from(APPLE.attestation, 'base64').toString('base64url');
  const assertion = Buffer.from(APPLE.assertion.assertion, 'base64').toString('base64url');

  afterAll(() => h.clock.set(new Date()));

  it('registers the key of a genuine attestation at the time it was made, and refuses it today', async () => {
    h.clock.set(new Date(APPLE.verifyAt));
    await plantChallenge(APPLE.clientDataUtf8);
    const body = await jsonOf(verify({ token, nonce: APPLE.clientDataUtf8, platform: 'ios' }));
    expect(body).toMatchObject({ valid: true, verdict: 'trusted', reasons: [], engine: 'app_attest', keyId: APPLE.keyId, build: null });

    h.clock.set(new Date());
    await plantChallenge(APPLE.clientDataUtf8);
    expect((await jsonOf(verify({ token, nonce: APPLE.clientDataUtf8, platform: 'ios' }))).reasons).toEqual(['certificate_expired']);
  });

  it('refuses an assertion by a key attested in another environment than the one configured now', async () => {
    h.clock.set(new Date(APPLE.assertion.capturedAt));
    const nonce = APPLE.assertion.clientDataUtf8;
    const ios = (environment: string) => configure({ android: { packageName: PACKAGE, playIntegrity: pi.config, keyAttestation: true }, ios: { teamId: APPLE.teamId, bundleId: APPLE.bundleId, environment } });
    expect(APPLE.environment).toBe('development');
    expect((await ios('production')).status).toBe(200);
    try {
      await plantChallenge(nonce);
      expect(await jsonOf(verify({ token: assertion, nonce, platform: 'ios', keyId: APPLE.keyId }))).toMatchObject({ verdict: 'untrusted', reasons: ['environment_mismatch'] });
    } finally {
      expect((await ios(APPLE.environment)).status).toBe(200);
    }
  });

  it('accepts its real assertion once, and refuses it replayed', async () => {
    h.clock.set(new Date(APPLE.assertion.capturedAt));
    const nonce = APPLE.assertion.clientDataUtf8;
    await plantChallenge(nonce);
    expect(await jsonOf(verify({ token: assertion, nonce, platform: 'ios', keyId: APPLE.keyId }))).toMatchObject({ verdict: 'trusted', reasons: [], keyId: APPLE.keyId });
    await plantChallenge(nonce);
    expect((await jsonOf(verify({ token: assertion, nonce, platform: 'ios', keyId: APPLE.keyId }))).reasons).toEqual(['counter_replayed']);
  });

  it('accepts one counter exactly once when two instances receive it at once', async () => {
    // A device key of this app (as an attestation registers it), and two assertions with the same counter over two
    // live challenges, made the way the Secure Enclave makes them (Apple's assertion steps, docs/attestation.md).
    h.clock.set(new Date());
    const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const spki = publicKey.export({ type: 'spki', format: 'der' });
    const keyId = createHash('sha256').update(rawPoint(publicKey)).digest('base64');
    await h.deps.repos.appAttestKeys.register({ appId, keyId, publicKeySpki: spki.toString('base64'), environment: 'development', counter: 0, attestedAt: h.clock.now(), lastAssertedAt: null });
    const assert = (nonce: string, counter: number) => {
      const rpIdHash = createHash('sha256').update(`${APPLE.teamId}.${APPLE.bundleId}`).digest();
      const authenticatorData = Buffer.concat([rpIdHash, Buffer.from([0x40]), Buffer.from([0, 0, 0, counter])]);
      const signed = createHash('sha256').update(authenticatorData).update(createHash('sha256').update(nonce, 'utf8').digest()).digest();
      const signature = sign('sha256', signed, privateKey);
      return Buffer.from(encodeCbor(new Map<string, Uint8Array>([['signature', new Uint8Array(signature)], ['authenticatorData', new Uint8Array(authenticatorData)]]))).toString('base64url');
    };
    const [n1, n2] = [await challenge(), await challenge()];
    const answers = await Promise.all([
      verify({ token: assert(n1, 5), nonce: n1, platform: 'ios', keyId }),
      verify({ token: assert(n2, 5), nonce: n2, platform: 'ios', keyId }, device, second.baseUrl),
    ]);
    const bodies = await Promise.all(answers.map((r) => jsonOf(r)));
    expect(bodies.map((b) => b.reasons.join()).sort()).toEqual(['', 'counter_replayed']);
    const n3 = await challenge();
    expect((await jsonOf(verify({ token: assert(n3, 6), nonce: n3, platform: 'ios', keyId }))).verdict).toBe('trusted');
  });

  it('refuses an assertion by a key the app never registered', async () => {
    await plantChallenge(APPLE.assertion.clientDataUtf8);
    const otherKey = Buffer.alloc(32, 7).toString('base64');
    expect((await jsonOf(verify({ token: assertion, nonce: APPLE.assertion.clientDataUtf8, platform: 'ios', keyId: otherKey }))).reasons).toEqual(['key_unknown']);
  });
});

describe('Android key attestation, a real Pixel chain', () => {
  const token = PIXEL.chain.toString('base64url');
  const nonce = Buffer.from(PIXEL.meta.challenge!.hex!, 'hex').toString('utf8');
  const pkg = PIXEL.meta.attestationApplicationId!.packageInfos[0];
  const digest = PIXEL.meta.attestationApplicationId!.signatureDigestsSha256Hex[0];

  beforeAll(async () => {
    const res = await configure({ android: { packageName: pkg.packageName, keyAttestation: true } });
    expect(res.status).toBe(200);
  });
  afterAll(() => h.clock.set(new Date()));

  const attest = async () => {
    h.clock.set(new Date(PIXEL.meta.verifyAt!));
    await plantChallenge(nonce);
    return jsonOf(verify({ token, nonce, platform: 'android' }));
  };

  it('says signer_unrecorded until the package has a recorded signer, then names it', async () => {
    expect((await attest()).reasons).toEqual(['signer_unrecorded']);
    h.clock.set(new Date());
    const recorded = await h.api(`/v1/apps/${appId}/signers`, { method: 'POST', headers: json(admin), body: JSON.stringify({ package: pkg.packageName, sha256: digest, reason: 'the Pixel fixture' }) });
    expect(recorded.status).toBe(201);
    expect(await attest()).toMatchObject({ valid: true, verdict: 'suspicious', reasons: ['version_unregistered'], engine: 'key_attestation', build: null });
  });

  it('names the registered build whose static scan read the attested versionCode', async () => {
    h.clock.set(new Date());
    const file = await buildApk({ manifest: androidManifest({ packageName: pkg.packageName, versionCode: String(pkg.version) }), sign: 'release' });
    const uploaded = await uploadPackage(h, admin, file, 'android', '1.0.0');
    const id = uploaded.id ?? uploaded.buildId;
    await waitForStaticScan(h, admin, id, 120_000);
    expect(await attest()).toMatchObject({ valid: true, verdict: 'trusted', reasons: [], engine: 'key_attestation', build: { id, version: '1.0.0' } });
  });

  it('refuses a platform the app did not configure', async () => {
    h.clock.set(new Date());
    const res = await configure({ android: { packageName: pkg.packageName, keyAttestation: true } });
    expect(res.status).toBe(200);
    await plantChallenge(APPLE.clientDataUtf8);
    const body = await jsonOf(verify({ token: Buffer.from(APPLE.attestation, 'base64').toString('base64url'), nonce: APPLE.clientDataUtf8, platform: 'ios' }));
    expect(body).toMatchObject({ verdict: 'untrusted', reasons: ['engine_unconfigured'], engine: 'app_attest' });
  });
});

describe('threats of an attested device', () => {
  const event = (deviceId: string) => ({ detection: 'hooking', verdict: 'compromised', confidence: 0.9, action: 'block', signals: ['frida'], platform: 'android', occurredAt: h.clock.now().toISOString(), deviceId });
  const ingest = (body: unknown) => h.api('/v1/events', { method: 'POST', headers: json(device), body: JSON.stringify(body) });
  const threatsOf = async (deviceSignal: string) => {
    const list = await jsonOf(h.api(`/v1/apps/${appId}/threats?limit=100`, { headers: bearer(admin) }));
    return list.data.filter((t: any) => t.signals.includes(deviceSignal));
  };

  it('carry attested and the build of a verdict token that verifies; any other token leaves them unattested, never refused', async () => {
    h.clock.set(new Date());
    const file = await buildApk({ manifest: androidManifest({ packageName: PACKAGE, versionCode: '77' }), sign: 'release' });
    const uploaded = await uploadPackage(h, admin, file, 'android', '7.7.0');
    const id = uploaded.id ?? uploaded.buildId;
    await waitForStaticScan(h, admin, id, 120_000);
    await configure({ android: { packageName: PACKAGE, playIntegrity: pi.config } });
    const signers = await jsonOf(h.api(`/v1/apps/${appId}/signers?package=${PACKAGE}`, { headers: bearer(admin) }));
    const nonce = await challenge();
    const token = await mintClassicToken(pi, { requestDetails: { requestPackageName: PACKAGE, nonce }, appIntegrity: { packageName: PACKAGE, certificateSha256Digest: [signerDigest(signers.data[0].sha256)], versionCode: '77' } }, { now: h.clock.now() });
    const verdict = await jsonOf(verify({ token, nonce, platform: 'android' }));
    expect(verdict).toMatchObject({ verdict: 'trusted', build: { id } });

    const signal = (name: string) => ({ ...event(`device-${name}`), signals: [`sig-${name}`] });
    expect((await ingest({ verdictToken: verdict.verdictToken, events: [signal('attested')] })).status).toBe(202);
    expect((await ingest({ events: [signal('plain')] })).status).toBe(202);
    const forged = verdict.verdictToken.slice(0, -4) + (verdict.verdictToken.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    expect((await ingest({ verdictToken: forged, events: [signal('forged')] })).status).toBe(202);
    // Another app's verdict token: it verifies, but names another app.
    const stubApp = await h.newApp('scale');
    const otherDevice = (await h.newKey(stubApp.appId, ['events:ingest'])).key;
    expect((await h.api('/v1/events', { method: 'POST', headers: json(otherDevice), body: JSON.stringify({ verdictToken: verdict.verdictToken, events: [signal('other-app')] }) })).status).toBe(202);
    h.clock.advance(5 * 60_000 + 1000);
    expect((await ingest({ verdictToken: verdict.verdictToken, events: [signal('expired')] })).status).toBe(202);

    expect(await threatsOf('sig-attested')).toEqual([expect.objectContaining({ attested: true, attestedBuildId: id })]);
    for (const name of ['plain', 'forged', 'expired']) expect(await threatsOf(`sig-${name}`)).toEqual([expect.objectContaining({ attested: false, attestedBuildId: null })]);
    const staff = await h.newStaff('support');
    const gql = await jsonOf(h.api('/graphql', { method: 'POST', headers: json(staff), body: JSON.stringify({ query: `{ app(id: "${appId}") { threats(first: 50) { nodes { signals attested attestedBuild { id version } } } } }` }) }));
    const attested = gql.data.app.threats.nodes.find((t: any) => t.signals.includes('sig-attested'));
    expect(attested).toEqual({ signals: ['sig-attested'], attested: true, attestedBuild: { id, version: '7.7.0' } });
  });
});

describe('the verdicts dashboard', () => {
  it('counts each verdict by UTC day, engine, verdict and first reason, for staff', async () => {
    h.clock.set(new Date());
    const from = new Date(Date.now() - 86_400_000).toISOString();
    const to = new Date(Date.now() + 86_400_000).toISOString();
    const staff = await h.newStaff('support');
    const before = await jsonOf(h.api('/graphql', { method: 'POST', headers: json(staff), body: JSON.stringify({ query: `{ app(id: "${appId}") { attestVerdicts(range: { from: "${from}", to: "${to}" }) { day engine verdict reason count } } }` }) }));
    // Counted on the clock's UTC day: earlier tests' verdicts of the day before (a run that crosses midnight) are
    // rows of their own, with the same engine, verdict and reason.
    const day = h.clock.now().toISOString().slice(0, 10);
    const countOf = (rows: any[], engine: string, verdict: string, reason: string) =>
      rows.find((r) => r.day === day && r.engine === engine && r.verdict === verdict && r.reason === reason)?.count ?? 0;
    const rows0 = before.data.app.attestVerdicts;
    expect((await configure({ android: { packageName: PACKAGE, keyAttestation: true } })).status).toBe(200);
    const nonce = await challenge();
    await verify({ token: 'not-a-jwe-not-a-chain', nonce, platform: 'android' });
    await verify({ token: 'not-a-jwe-not-a-chain', nonce, platform: 'android' });
    const after = await jsonOf(h.api('/graphql', { method: 'POST', headers: json(staff), body: JSON.stringify({ query: `{ app(id: "${appId}") { attestVerdicts(range: { from: "${from}", to: "${to}" }) { day engine verdict reason count } } }` }) }));
    const rows1 = after.data.app.attestVerdicts;
    expect(countOf(rows1, 'key_attestation', 'untrusted', 'nonce_replayed')).toBe(countOf(rows0, 'key_attestation', 'untrusted', 'nonce_replayed') + 1);
    expect(countOf(rows1, 'key_attestation', 'untrusted', 'token_malformed')).toBe(countOf(rows0, 'key_attestation', 'untrusted', 'token_malformed') + 1);
    // Every row is a UTC day of the range, and the verdicts just given are on the clock's.
    for (const r of rows1) expect(r.day >= from.slice(0, 10) && r.day <= to.slice(0, 10)).toBe(true);
    expect(rows1.filter((r: any) => r.day === day).length).toBeGreaterThan(0);

    // A verdict another instance gave reaches this instance's dashboard once that instance adds its counts (a second
    // later, on its own): counted once, not lost because it was held in the other process's memory.
    const elsewhere = await challenge();
    await verify({ token: 'not-a-jwe-not-a-chain', nonce: elsewhere, platform: 'android' }, device, second.baseUrl);
    const malformed0 = countOf(rows1, 'key_attestation', 'untrusted', 'token_malformed');
    let malformed = malformed0;
    for (const until = Date.now() + 10_000; malformed === malformed0 && Date.now() < until; await new Promise((r) => setTimeout(r, 100))) {
      const rows = await jsonOf(h.api('/graphql', { method: 'POST', headers: json(staff), body: JSON.stringify({ query: `{ app(id: "${appId}") { attestVerdicts(range: { from: "${from}", to: "${to}" }) { day engine verdict reason count } } }` }) }));
      malformed = countOf(rows.data.app.attestVerdicts, 'key_attestation', 'untrusted', 'token_malformed');
    }
    expect(malformed).toBe(malformed0 + 1);
  });
});

it('publishes the verdict keys as a cacheable JWK Set without a credential', async () => {
  const res = await h.api('/v1/attest/jwks');
  expect(res.status).toBe(200);
  expect(res.headers.get('cache-control')).toBe('public, max-age=300');
  const jwks = await jsonOf(res);
  expect(jwks.keys.length).toBeGreaterThan(0);
  for (const k of jwks.keys) {
    expect(k).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect(k.d).toBeUndefined();
  }
});
