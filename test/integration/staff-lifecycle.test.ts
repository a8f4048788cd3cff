// Protects: staff credentials have a lifecycle (docs/contract.md, "Credentials and scopes"): tokens expire (12 h by default, or the
// lifetime given at creation), revocation is effective on the next request, last use is recorded (at most once a
// minute); every staff and operator mutation is an audit entry naming actor, action and resource, readable by admins
// over GraphQL (support staff are refused) and with `shieldgate audit`; `staff create --ttl`, `staff list`,
// `staff revoke` at the command line.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { startHarness, bearer, readJson, type Harness } from '../support/harness';
import { createStaff } from '../../src/services/keys-service';
import { parseDuration } from '../../src/cli/duration';
import { operatorContext } from '../../src/services/operator-context';

/** The secret part of `svc_live_<id>_<secret>` or `stf_<id>_<secret>`: everything after the id (base64url may hold `_`). */
const secretOf = (credential: string): string => /^(?:svc_(?:live|test)|stf)_[A-Za-z0-9]+_(.+)$/.exec(credential)![1];

const BIN = path.join(__dirname, '..', '..', 'bin', 'shieldgate.js');
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h.close());

function gql(token: string, query: string, variables?: Record<string, unknown>) {
  return h.api('/graphql', { method: 'POST', headers: { ...bearer(token), 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
}

const ping = async (token: string) => (await gql(token, '{ ping }')).status;

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...process.env, MONGODB_URI: h.config.mongodbUri!, MONGODB_DATABASE: h.config.mongodbDatabase, REDIS_URL: '' } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

it('expires a staff token after 12 hours by default, and after the lifetime given at creation', async () => {
  const standard = await h.newStaff('support');
  const short = (await createStaff(operatorContext(h.deps), 'admin', 'short', { ttlMs: 30 * 60_000 })).token;
  expect(await ping(standard)).toBe(200);
  expect(await ping(short)).toBe(200);
  h.clock.advance(30 * 60_000);
  expect(await ping(short)).toBe(401);
  expect(await ping(standard)).toBe(200);
  h.clock.advance(11.5 * 3600_000);
  expect(await ping(standard)).toBe(401);
});

it('gives tokens made before expiry existed the default lifetime from their creation', async () => {
  const token = await h.newStaff('support');
  const id = token.split('_')[1];
  await h.deps.db.collection('staff').updateOne({ _id: id as never }, { $unset: { expiresAt: '' } });
  expect(await ping(token)).toBe(200);
  h.clock.advance(12 * 3600_000);
  expect(await ping(token)).toBe(401);
});

it('refuses a revoked token on its next request, and records last use at most once a minute', async () => {
  const admin = await h.newStaff('admin');
  const id = admin.split('_')[1];
  const lastUsed = async () => (await h.deps.repos.staff.findById(id))!.lastUsedAt ?? null;
  expect(await lastUsed()).toBeNull();
  expect(await ping(admin)).toBe(200);
  const first = await waitFor(lastUsed);
  h.clock.advance(20_000);
  expect(await ping(admin)).toBe(200);
  await new Promise((r) => setTimeout(r, 100));
  expect((await lastUsed())!.getTime()).toBe(first.getTime());
  h.clock.advance(45_000);
  expect(await ping(admin)).toBe(200);
  const second = await waitFor(async () => ((await lastUsed())!.getTime() > first.getTime() ? await lastUsed() : null));
  expect(second.getTime()).toBe(h.clock.now().getTime());

  await h.deps.repos.staff.revoke(id, h.clock.now());
  expect(await ping(admin)).toBe(401);
});

it('audits staff mutations with their actor and resource; admins read the log, support staff cannot', async () => {
  const admin = await h.newStaff('admin');
  const adminId = admin.split('_')[1];
  const support = await h.newStaff('support');
  h.clock.advance(1000);
  const app = await readJson(await gql(admin, 'mutation { createApp(input: { name: "audited", plan: indie }) { id } }'));
  const appId = app.data.createApp.id;
  h.clock.advance(1000); // entries of one instant are ordered by id; one second apart, by time
  const created = await readJson(await gql(admin, 'mutation($a: ID!) { createApiKey(input: { appId: $a, scopes: ["builds:read"] }) { apiKey { id } key } }', { a: appId }));
  const keyId = created.data.createApiKey.apiKey.id;
  h.clock.advance(1000);
  await gql(admin, 'mutation($id: ID!) { revokeApiKey(id: $id) { id } }', { id: keyId });

  const log = await readJson(await gql(admin, '{ auditLogConnection(first: 3) { nodes { appId targetAppId action actor resource } } }'));
  expect(log.data.auditLogConnection.nodes).toEqual([
    { appId, targetAppId: appId, action: 'api_key.revoked', actor: `staff:${adminId}`, resource: `api_key:${keyId}` },
    { appId, targetAppId: appId, action: 'api_key.created', actor: `staff:${adminId}`, resource: `api_key:${keyId}` },
    { appId, targetAppId: appId, action: 'app.created', actor: `staff:${adminId}`, resource: `app:${appId}` },
  ]);
  // The app's own trail shows them too: its key holders see who made and revoked the app's keys.
  expect((await h.deps.repos.audit.list(appId, { limit: 10 })).data.map((e) => e.action)).toEqual(['api_key.revoked', 'api_key.created', 'app.created']);
  const holder = (await h.newKey(appId, ['rules:read'])).key;
  const trail = await readJson(await h.api(`/v1/apps/${appId}/audit-events`, { headers: { authorization: `Bearer ${holder}` } }));
  expect(trail.data.map((e: { action: string }) => e.action)).toEqual(expect.arrayContaining(['api_key.revoked', 'api_key.created', 'app.created']));
  const refused = await readJson(await gql(support, '{ auditLogConnection { nodes { id } } }'));
  expect(refused.errors[0].extensions.code).toBe('insufficient_scope');
  // Nothing of the key's secret is in the trail.
  const all = await h.deps.db.collection('audit_events').find({}).toArray();
  expect(JSON.stringify(all)).not.toContain(secretOf(created.data.createApiKey.key));
});

it('creates, lists and revokes staff tokens at the command line, auditing each, with --ttl', async () => {
  const created = await cli(['staff', 'create', '--role', 'admin', '--name', 'on-call', '--ttl', '90m']);
  expect(created.code).toBe(0);
  const staff = JSON.parse(created.stdout);
  // The command runs on the real clock.
  const left = new Date(staff.expiresAt).getTime() - Date.now();
  expect(left).toBeGreaterThan(89 * 60_000);
  expect(left).toBeLessThanOrEqual(90 * 60_000);

  const listed = JSON.parse((await cli(['staff', 'list'])).stdout);
  const entry = listed.data.find((s: { id: string }) => s.id === staff.id);
  expect(Object.keys(entry).sort()).toEqual(['createdAt', 'expiresAt', 'id', 'lastUsedAt', 'name', 'revokedAt', 'role']);
  expect(entry).toMatchObject({ role: 'admin', name: 'on-call', revokedAt: null });
  expect(JSON.stringify(listed)).not.toContain(secretOf(staff.token));

  const revoked = await cli(['staff', 'revoke', staff.id]);
  expect(revoked.code).toBe(0);
  expect(JSON.parse(revoked.stdout)).toEqual({ id: staff.id, revokedAt: expect.any(String) });

  const bad = await cli(['staff', 'create', '--role', 'admin', '--ttl', 'forever']);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain('--ttl must be');

  const audit = JSON.parse((await cli(['audit', '--limit', '100'])).stdout);
  const about = audit.data.filter((d: { resource: string }) => d.resource === `staff:${staff.id}`).map((d: { action: string; actor: string }) => [d.action, d.actor]);
  expect(about).toEqual([
    ['staff.revoked', expect.stringMatching(/^operator/)],
    ['staff.created', expect.stringMatching(/^operator/)],
  ]);
});

it('reads durations as seconds or with s, m, h, d', () => {
  expect(parseDuration('3600')).toBe(3600_000);
  expect(parseDuration('90s')).toBe(90_000);
  expect(parseDuration('15m')).toBe(900_000);
  expect(parseDuration('12h')).toBe(12 * 3600_000);
  expect(parseDuration('7d')).toBe(7 * 86_400_000);
  for (const bad of ['', '0', '1w', '-5m', '1.5h', 'h', '12 h x']) expect(parseDuration(bad)).toBeNull();
});

async function waitFor<T>(read: () => Promise<T | null>): Promise<T> {
  for (let i = 0; i < 100; i++) {
    const value = await read();
    if (value) return value;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('condition never held');
}
