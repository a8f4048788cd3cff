// Protects: KEY_ENCRYPTION_KEY. The service's private signing keys are sealed at rest: a new key is stored without
// its private part in the clear, signs upload URLs that work end to end, and a service started with another
// key-encryption key, or none, stops at once with one line naming the key; the CLI can still rotate to recover.
// The service secrets (device-id hashing, cursor MACs) are keyed by it: the stored value alone reproduces nothing.
import { randomBytes } from 'node:crypto';
import { bearer, json, readJson, startHarness, type Harness } from '../support/harness';
import { loadConfig } from '../../src/core/config';
import { createDeps, closeDeps } from '../../src/bootstrap';
import { createLogger } from '../../src/core/logger';
import { SigningKeysRepo } from '../../src/data/signing-keys-repo';
import { SigningKeys } from '../../src/crypto/signing-keys';
import { artifactBytes, createBuildWithArtifact, put } from './uploads-support';
import { hashDeviceId } from '../../src/threats/merge-key';

const KEK = randomBytes(32).toString('base64');
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ env: { KEY_ENCRYPTION_KEY: KEK } });
});
afterAll(async () => h.close());

/**
 * Starts the dependencies again on the same database with this key-encryption key and runs the check the service
 * runs at start (src/main.ts); resolves with the warnings logged.
 */
async function startAnother(kek: string | undefined) {
  const config = loadConfig({
    MONGODB_URI: h.config.mongodbUri!,
    MONGODB_DATABASE: h.config.mongodbDatabase,
    DATA_DIR: h.config.dataDir,
    ...(kek === undefined ? {} : { KEY_ENCRYPTION_KEY: kek }),
  });
  const lines: string[] = [];
  const logger = createLogger('warn', { write: (line: string) => void lines.push(line) } as never);
  const deps = await createDeps(config, { mongo: h.deps.mongo, logger });
  try {
    const warning = await deps.signingKeys.checkActiveKey();
    if (warning) deps.logger.warn(warning);
  } finally {
    await closeDeps(deps, { closeMongo: false });
  }
  return lines.map((l) => JSON.parse(l).msg as string);
}

it('stores a new key sealed, and the upload URLs it signs work', async () => {
  const { kid } = await h.deps.signingKeys.rotate({ revokePrevious: false });
  const doc = await h.deps.db.collection(SigningKeysRepo.collectionName).findOne({ _id: kid as never });
  expect(doc!.privateJwk).toBeUndefined();
  expect(doc!.sealedPrivateJwk).toMatchObject({ alg: 'A256GCM' });
  expect(Object.keys(doc!.publicJwk)).not.toContain('d');
  expect(JSON.stringify(doc)).not.toContain('"d"'); // the private scalar is nowhere in the clear

  const { appId } = await h.newApp('scale');
  const { key } = await h.newKey(appId, ['builds:write', 'builds:read']);
  const { bytes, sha256 } = artifactBytes(64 * 1024);
  const build = await createBuildWithArtifact(h, key, bytes, sha256);
  expect((await put(build.artifact.uploadUrl, bytes)).status).toBe(200);
});

it('starts another instance with the same key-encryption key', async () => {
  expect(await startAnother(KEK)).toEqual([]);
});

it('refuses to start with another key-encryption key, or none, naming the sealed key', async () => {
  const { kid } = await h.deps.signingKeys.rotate({ revokePrevious: false });
  await expect(startAnother(randomBytes(32).toString('base64'))).rejects.toThrow(
    `KEY_ENCRYPTION_KEY does not open signing key ${kid}: set the key it was sealed with`,
  );
  await expect(startAnother(undefined)).rejects.toThrow(`signing key ${kid} is sealed: set KEY_ENCRYPTION_KEY to the key it was sealed with`);
});

it('warns when the active key is stored in the clear, until a rotation seals the next one', async () => {
  // A key made before the key-encryption key was set: written in the clear by a service without one.
  const withoutKek = new SigningKeys(h.deps.repos.signingKeys, h.clock, h.config.publicBaseUrl);
  const { kid } = await withoutKek.rotate({ revokePrevious: false });
  expect(await startAnother(KEK)).toEqual([`signing key ${kid} is stored in the clear; run \`shieldgate signing-key rotate\` to seal a new one`]);
  await h.deps.signingKeys.rotate({ revokePrevious: false });
  expect(await startAnother(KEK)).toEqual([]);
});

it('recovers from a lost key-encryption key by rotating with a new one, as the CLI does', async () => {
  const lost = await h.deps.signingKeys.rotate({ revokePrevious: false });
  const replacement = randomBytes(32).toString('base64');
  await expect(startAnother(replacement)).rejects.toThrow(`does not open signing key ${lost.kid}`);
  // `shieldgate signing-key rotate --revoke-previous` with the new key: createDeps does not need the old one.
  const config = loadConfig({ MONGODB_URI: h.config.mongodbUri!, MONGODB_DATABASE: h.config.mongodbDatabase, DATA_DIR: h.config.dataDir, KEY_ENCRYPTION_KEY: replacement });
  const cli = await createDeps(config, { mongo: h.deps.mongo, logger: createLogger('silent') });
  const rotated = await cli.signingKeys.rotate({ revokePrevious: true });
  await closeDeps(cli, { closeMongo: false });
  expect(rotated.revoked).toBeGreaterThan(0);
  expect(await startAnother(replacement)).toEqual([]);
});

it('keys device-id hashes with it: the stored service secret alone does not reproduce them', async () => {
  const { appId } = await h.newApp('scale');
  const device = (await h.newKey(appId, ['events:ingest'])).key;
  const reader = (await h.newKey(appId, ['threats:read'])).key;
  const event = { detection: 'hooking', verdict: 'compromised', confidence: 0.9, action: 'block', signals: ['frida'], occurredAt: h.clock.now().toISOString(), deviceId: 'device-under-test-01' };
  const res = await h.api('/v1/events', { method: 'POST', headers: json(device), body: JSON.stringify({ events: [event] }) });
  expect(res.status).toBe(202);
  expect((await readJson(await h.api(`/v1/apps/${appId}/threats`, { headers: bearer(reader) }))).data).toHaveLength(1);

  const stored = await h.deps.db.collection('service_secrets').findOne({ _id: 'device-id' as never });
  const fromDump = hashDeviceId(Buffer.from(stored!.value, 'base64'), appId, event.deviceId);
  const inUse = hashDeviceId(h.deps.deviceIdKey, appId, event.deviceId);
  const threats = await h.deps.db.collection('threats').find({ appId }).toArray();
  const text = JSON.stringify(threats);
  expect(text).toContain(inUse);
  expect(text).not.toContain(fromDump);
});
