// Protects: an address whose upload URLs keep failing their check (src/uploads/failed-upload-tokens.ts) has its
// next tokens checked without a database read, but a token whose signature holds is still honoured: one client
// sending forged URLs from a shared CI egress address cannot lock the other jobs behind it out of their uploads.
import type { CommandStartedEvent } from 'mongodb';
import { startHarness, type Harness } from '../support/harness';
import { SigningKeysRepo } from '../../src/data/signing-keys-repo';
import { FAILED_UPLOAD_TOKENS_PER_MINUTE } from '../../src/uploads/failed-upload-tokens';
import { artifactBytes, createBuildWithArtifact, put } from './uploads-support';

let h: Harness;
let key: string;
beforeAll(async () => {
  h = await startHarness({ jobs: false });
  const { appId } = await h.newApp('enterprise');
  key = (await h.newKey(appId, ['builds:write', 'builds:read'])).key;
});
afterAll(async () => h.close());

/** The upload URL with one character in the middle of its signature changed: a real kid, a signature that fails. */
function tampered(url: string, i: number): string {
  const at = url.lastIndexOf('.') + 20 + (i % 20);
  const other = 'QRSTUVWXYZ'.replace(url[at], '')[i % 9];
  return url.slice(0, at) + other + url.slice(at + 1);
}

it(`honours a valid upload URL from an address that sent ${FAILED_UPLOAD_TOKENS_PER_MINUTE + 10} forged ones, and reads no signing key for the forged ones past the count`, async () => {
  const { bytes, sha256 } = artifactBytes(1024);
  const build = await createBuildWithArtifact(h, key, bytes, sha256);
  const url: string = build.artifact.uploadUrl;
  const ciEgress = { 'x-forwarded-for': '203.0.113.90' };
  const forgedWithoutKey = url.replace(/\/v1\/uploads\/.*$/, '/v1/uploads/eyJhbGciOiJFUzI1NiIsImtpZCI6Im5vbmUiLCJ0eXAiOiJ1cGxvYWQifQ.e30.c2ln');

  // Count the reads of the signing keys collection.
  const reads: string[] = [];
  const listener = (event: CommandStartedEvent) => {
    const collection = (event.command as Record<string, unknown>)[event.commandName];
    if (collection === SigningKeysRepo.collectionName) reads.push(event.commandName);
  };
  h.deps.mongo.on('commandStarted', listener);
  try {
    for (let i = 0; i < FAILED_UPLOAD_TOKENS_PER_MINUTE; i++) {
      const forged = i % 2 ? forgedWithoutKey : tampered(url, i);
      expect((await put(forged, bytes, { headers: ciEgress })).status).toBe(403);
    }
    const readsBeforeBlock = reads.length;
    expect(readsBeforeBlock).toBeGreaterThan(0); // the full check reads the key's status: the count can be seen
    for (let i = 0; i < 10; i++) {
      const refused = await put(tampered(url, i), bytes, { headers: ciEgress });
      expect([refused.status, refused.body.code]).toEqual([403, 'upload_url_invalid']);
    }
    // Past the count, a forged token with a known kid costs no read; the public keys may be read once to learn them.
    expect(reads.length - readsBeforeBlock).toBeLessThanOrEqual(1);
  } finally {
    h.deps.mongo.off('commandStarted', listener);
  }

  const honoured = await put(url, bytes, { headers: ciEgress });
  expect([honoured.status, honoured.body.code]).toEqual([200, undefined]);
  expect(honoured.body.artifact.status).toBe('uploaded');
});

it('still refuses a genuine token of a revoked key from a blocked address', async () => {
  const { bytes, sha256 } = artifactBytes(2048);
  const build = await createBuildWithArtifact(h, key, bytes, sha256);
  const url: string = build.artifact.uploadUrl;
  const flooder = { 'x-forwarded-for': '203.0.113.91' };
  for (let i = 0; i < FAILED_UPLOAD_TOKENS_PER_MINUTE; i++) expect((await put(tampered(url, i), bytes, { headers: flooder })).status).toBe(403);
  await h.deps.signingKeys.rotate({ revokePrevious: true });
  // Its signature holds against the public keys this instance read before, but the key's status is read as always.
  const refused = await put(url, bytes, { headers: flooder });
  expect([refused.status, refused.body.code]).toEqual([403, 'upload_url_invalid']);
});
