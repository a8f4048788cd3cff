// Protects: who did what can be told afterwards. A webhook's creation and deletion are entries of the app's audit
// trail (webhook.created, webhook.deleted) naming who did it, with the URL's host but never its path or query (a
// receiver's token often rides there); the access log names the caller by an identifier that is no credential: the
// staff id and the operation name of a staff /graphql request (a staff read of a tenant's data), the key id of an
// API key, the OIDC subject and trust rule of an access token; never the token itself.
import { startHarness, bearer, json, readJson, type Harness } from '../support/harness';
import { accessLines as accessLinesOf, captureLogs, until } from '../support/log-capture';
import { accessToken, gql } from './threats-support';

let h: Harness;
let lines: string[];
beforeAll(async () => {
  h = await startHarness({ jobs: false });
});
afterAll(async () => h.close());
beforeEach(() => {
  lines = captureLogs(h);
});

const accessLines = () => accessLinesOf(lines);

const staffIdOf = (token: string) => token.split('_')[1];

it('records webhook.created and webhook.deleted with their actor, the host and never the URL path or query', async () => {
  const { appId } = await h.newApp('enterprise');
  const owner = await h.newKey(appId, ['rules:write', 'rules:read']);
  const admin = await h.newStaff('admin');
  const url = 'https://hooks.example.com/services/T000/B000/XXXXsecretpath?token=querysecret';
  const created = await readJson(await h.api(`/v1/apps/${appId}/webhooks`, { method: 'POST', headers: json(owner.key), body: JSON.stringify({ url, events: ['threat.opened'] }) }));
  expect(created.id).toMatch(/^whk_/);
  h.clock.advance(1_000); // the trail is newest first: one second apart, its order is known
  // An admin removes it through /graphql.
  const removed = await gql(h, admin, 'mutation RemoveHook($appId: ID!, $id: ID!) { deleteWebhook(appId: $appId, webhookId: $id) }', { appId, id: created.id });
  expect(removed.body).toEqual({ data: { deleteWebhook: true } });

  // The app's key holders read both in the trail, through the REST contract.
  const trail = await readJson(await h.api(`/v1/apps/${appId}/audit-events`, { headers: bearer(owner.key) }));
  expect(trail.data.filter((e: any) => e.action.startsWith('webhook.')).map((e: any) => [e.action, e.subject])).toEqual([
    ['webhook.deleted', created.id],
    ['webhook.created', created.id],
  ]);
  // Staff see who: the API key, then the admin.
  const seen = await gql(h, admin, 'query Trail($appId: ID!) { app(id: $appId) { auditEvents { nodes { action actor subject } } } }', { appId });
  expect(seen.body.data.app.auditEvents.nodes.filter((e: any) => e.action.startsWith('webhook.'))).toEqual([
    { action: 'webhook.deleted', actor: `staff:${staffIdOf(admin)}`, subject: created.id },
    { action: 'webhook.created', actor: `api_key:${owner.id}`, subject: created.id },
  ]);
  const stored = await h.deps.db.collection('audit_events').find({ appId, action: { $in: ['webhook.created', 'webhook.deleted'] } }).toArray();
  expect(stored.map((e) => e.details.host)).toEqual(['hooks.example.com', 'hooks.example.com']);
  const everything = JSON.stringify(stored);
  expect(everything).not.toContain('secretpath');
  expect(everything).not.toContain('querysecret');
});

it('names the staff id and the operation of a staff read of a tenant, the key id of an API key, the subject of an access token', async () => {
  const { appId } = await h.newApp('enterprise');
  const reader = await h.newKey(appId, ['builds:read']);
  const support = await h.newStaff('support');
  const token = await accessToken(h, appId, ['builds:read']);

  const read = await gql(h, support, 'query LookAtTenantBuilds($appId: ID!) { app(id: $appId) { id } }', { appId });
  expect(read.status).toBe(200);
  expect((await h.api('/v1/whoami', { headers: bearer(reader.key) })).status).toBe(200);
  expect((await h.api('/v1/whoami', { headers: bearer(token) })).status).toBe(200);
  await until(() => accessLines().length === 3, 'three access lines');

  const [staffLine, keyLine, tokenLine] = accessLines();
  expect(staffLine).toMatchObject({ api: 'graphql', credential: 'staff', staffId: staffIdOf(support), operationName: 'LookAtTenantBuilds' });
  expect(keyLine).toMatchObject({ credential: 'api_key', appId, keyId: reader.id });
  expect(tokenLine).toMatchObject({ credential: 'oidc', appId, subject: 'repo:acme/mobile:ref:refs/heads/main', ruleId: expect.stringMatching(/^rul_/) });
  // No credential in any line: not the staff token's secret, the key's, nor the access token.
  const all = lines.join('\n');
  for (const secret of [support.split('_').slice(2).join('_'), reader.key.split('_').at(-1)!, token.split('.')[2]]) expect(all).not.toContain(secret);
});
