// Protects: the operator CLI of docs/contract.md: one JSON object on stdout per call, a one-line error on stderr with a
// non-zero exit, and commands that really change what the service sees (keys work, revoked keys stop working).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { startHarness, bearer, type Harness, readJson } from '../support/harness';
import { operatorContext } from '../../src/services/operator-context';

const BIN = path.join(__dirname, '..', '..', 'bin', 'shieldgate.js');
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h.close());

function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...process.env, MONGODB_URI: h.config.mongodbUri!, MONGODB_DATABASE: h.config.mongodbDatabase, REDIS_URL: '', ...env } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

function oneJson(stdout: string) {
  const lines = stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]);
}

it('creates an app and a key that the API accepts, then revokes it', async () => {
  const app = oneJson((await cli(['app', 'create', '--name', 'Payments', '--plan', 'startup', '--org', 'acme'])).stdout);
  expect(app.id).toMatch(/^app_[A-Za-z0-9]{20}$/);
  const created = await cli(['key', 'create', '--app', app.id, '--scopes', 'builds:read,threats:read', '--name', 'ci']);
  expect(created.code).toBe(0);
  const key = oneJson(created.stdout);
  expect(key.key).toMatch(/^svc_live_/);
  const whoami = await h.api('/v1/whoami', { headers: bearer(key.key) });
  expect(await readJson(whoami)).toMatchObject({ appId: app.id, plan: 'startup', scopes: ['builds:read', 'threats:read'] });

  const revoked = await cli(['key', 'revoke', key.id]);
  expect(revoked.code).toBe(0);
  expect(oneJson(revoked.stdout).id).toBe(key.id);
  expect((await h.api('/v1/whoami', { headers: bearer(key.key) })).status).toBe(401);
});

it('creates test keys and staff tokens', async () => {
  const app = oneJson((await cli(['app', 'create', '--name', 'x', '--plan', 'indie'])).stdout);
  expect(oneJson((await cli(['key', 'create', '--app', app.id, '--scopes', 'events:ingest', '--test'])).stdout).key).toMatch(/^svc_test_/);
  const staff = oneJson((await cli(['staff', 'create', '--role', 'support'])).stdout);
  expect(staff.token).toMatch(/^stf_/);
  const res = await h.api('/graphql', { method: 'POST', headers: { ...bearer(staff.token), 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ ping }' }) });
  expect(res.status).toBe(200);
});

it('rotates the signing key and can revoke the previous ones', async () => {
  const first = oneJson((await cli(['signing-key', 'rotate'])).stdout);
  const second = oneJson((await cli(['signing-key', 'rotate', '--revoke-previous'])).stdout);
  expect(second.kid).not.toBe(first.kid);
  expect(second.revokedPrevious).toBeGreaterThanOrEqual(1);
  expect((await h.deps.repos.signingKeys.findById(first.kid))?.status).toBe('revoked');
  expect((await h.deps.repos.signingKeys.findActive())?._id).toBe(second.kid);
});

it('rotates the attestation verdict key apart from the signing key; the JWKS keeps the previous one until it is revoked', async () => {
  const signing = (await h.deps.repos.signingKeys.findActive())?._id;
  const first = oneJson((await cli(['attest-key', 'rotate'])).stdout);
  const second = oneJson((await cli(['attest-key', 'rotate'])).stdout);
  expect(first.kid).toMatch(/^ak_/);
  const kids = (await h.deps.attestKeys.publicJwks()).keys.map((k) => k.kid);
  expect(kids).toEqual(expect.arrayContaining([first.kid, second.kid]));
  const third = oneJson((await cli(['attest-key', 'rotate', '--revoke-previous'])).stdout);
  expect((await h.deps.attestKeys.publicJwks()).keys.map((k) => k.kid)).toEqual([third.kid]);
  expect((await h.deps.repos.signingKeys.findActive())?._id).toBe(signing);
});

it('reads the audit trail of an app', async () => {
  const app = oneJson((await cli(['app', 'create', '--name', 'x', '--plan', 'indie'])).stdout);
  const { recordAudit } = await import('../../src/services/audit-service');
  await recordAudit(operatorContext(h.deps, null), { appId: app.id, action: 'oidc.denied', subject: 'repo:acme/app:ref:refs/heads/main', reason: 'not_trusted' });
  const out = oneJson((await cli(['audit', '--app', app.id, '--limit', '5'])).stdout);
  // The refusal, and the operator's creation of the app (entries about an app are in its trail); one instant, so
  // their order is their ids'.
  expect(out.data).toHaveLength(2);
  const byAction = Object.fromEntries(out.data.map((e: { action: string }) => [e.action, e]));
  expect(byAction['oidc.denied']).toMatchObject({ reason: 'not_trusted', subject: 'repo:acme/app:ref:refs/heads/main' });
  expect(byAction['app.created']).toMatchObject({ actor: 'operator:root' });
});

it.each([
  [[], /no command given/],
  [['app', 'destroy'], /unknown command/],
  [['app', 'create', '--name', 'x'], /--plan is required/],
  [['app', 'create', '--name', 'x', '--plan', 'gold'], /plan must be one of|must be one of/],
  [['key', 'create', '--app', 'app_nothere00000000000', '--scopes', 'builds:read'], /App not found/],
  [['key', 'create', '--app', 'app_x', '--scopes', 'root'], /unknown scopes root/],
  [['key', 'revoke'], /key revoke takes one KEY_ID/],
  [['staff', 'create', '--role', 'god'], /role must be support or admin/],
  [['audit', '--app', 'app_x', '--limit', 'many'], /--limit must be an integer/],
  [['app', 'create', '--unknown-flag'], /Unknown option/],
])('fails clearly for %j', async (args, message) => {
  const res = await cli(args as string[]);
  expect(res.code).not.toBe(0);
  expect(res.stdout).toBe('');
  expect(res.stderr.split('\n')[0]).toMatch(/^shieldgate: /);
  expect(res.stderr).toMatch(message);
});

it('stops with one line on a bad configuration', async () => {
  const res = await cli(['app', 'create', '--name', 'x', '--plan', 'indie'], { MONGODB_URI: 'postgres://nope', MONGODB_DATABASE: `x${randomBytes(3).toString('hex')}` });
  expect(res.code).toBe(1);
  expect(res.stderr.trim()).toBe('shieldgate: configuration error: MONGODB_URI must use mongodb: or mongodb+srv:, got "postgres:"');
});
