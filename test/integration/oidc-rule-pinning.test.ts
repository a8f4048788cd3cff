// Protects: trust rules written with names only are pinned on first use. The first job a rule admits pins it to
// that job's verified `repository_owner_id` and (for a pattern naming one repository) `repository_id`, audited as
// `oidc.rule_pinned`; a repository deleted and re-created under the same name, or an account whose old name someone
// else took, is then refused, with the failing pin in the owner's audit trail. Patterns with `*` in the repository
// name keep admitting every repository of the pinned owner. Two jobs racing to pin a fresh rule: one pin wins.
import { randomInt } from 'node:crypto';
import { startHarness, json, type Harness } from '../support/harness';
import { startOidcIssuer, type OidcIssuer } from '../support/oidc-issuer';
import type { AuditDoc } from '../../src/data/audit-repo';

const readJson = (res: Response): Promise<any> => res.json();
let issuer: OidcIssuer;
let h: Harness;

beforeAll(async () => {
  issuer = await startOidcIssuer();
  h = await startHarness({ env: { OIDC_ISSUER: issuer.url, OIDC_ALLOW_INSECURE_ISSUER: 'on' } });
  issuer.bind({ audience: h.baseUrl, now: () => h.clock.now() });
});
afterAll(async () => {
  await h.close();
  await issuer.close();
});

const clientAddress = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
const exchange = (overrides: Record<string, unknown>, appId: string) =>
  h.api('/v1/auth/oidc', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': clientAddress() },
    body: JSON.stringify({ token: issuer.mint(overrides), appId }),
  });

async function appWithRule(rule: Record<string, unknown>) {
  const { appId } = await h.newApp('startup');
  const admin = await h.newKey(appId, ['rules:write', 'rules:read']);
  const res = await h.api(`/v1/apps/${appId}/oidc-rules`, { method: 'POST', headers: json(admin.key), body: JSON.stringify(rule) });
  expect(res.status).toBe(201);
  return { appId, adminKey: admin.key, ruleId: (await readJson(res)).id as string };
}

async function ruleOf(appId: string, adminKey: string, ruleId: string) {
  const res = await h.api(`/v1/apps/${appId}/oidc-rules`, { headers: json(adminKey) });
  return ((await readJson(res)).data as any[]).find((r) => r.id === ruleId);
}

const auditOf = async (appId: string, action: AuditDoc['action']) => (await h.deps.repos.audit.list(appId, { limit: 100, action })).data;

it('pins a name-only rule to the first job it admits, and refuses a re-created repository of the same name', async () => {
  const { appId, adminKey, ruleId } = await appWithRule({ subjectPattern: 'repo:acme/mobile-app:ref:refs/heads/main', scopes: ['builds:write'] });
  expect(await ruleOf(appId, adminKey, ruleId)).toMatchObject({ repositoryId: null, repositoryOwnerId: null });

  expect((await exchange({}, appId)).status).toBe(200); // acme/mobile-app: repository_id 123456789, owner 4242
  expect(await ruleOf(appId, adminKey, ruleId)).toMatchObject({ repositoryId: '123456789', repositoryOwnerId: '4242' });
  const pins = await auditOf(appId, 'oidc.rule_pinned');
  expect(pins).toHaveLength(1);
  expect(pins[0]).toMatchObject({ ruleId, details: { repositoryId: '123456789', repositoryOwnerId: '4242' } });

  // The same repository keeps working; pinning happens once.
  h.clock.advance(1000);
  expect((await exchange({}, appId)).status).toBe(200);
  expect(await auditOf(appId, 'oidc.rule_pinned')).toHaveLength(1);

  // Deleted and re-created under the same name (a new repository id): refused, and the owner sees why.
  h.clock.advance(1000);
  expect((await exchange({ repository_id: '999000111' }, appId)).status).toBe(401);
  const denied = (await auditOf(appId, 'oidc.denied'))[0];
  expect(denied.rules![0]).toMatchObject({ id: ruleId, matched: false, failed: { check: 'repositoryId', expected: '123456789', actual: '999000111' } });

  // The account renamed and its old name taken by another owner: refused.
  h.clock.advance(1000);
  expect((await exchange({ repository_owner_id: '777', repository_id: '123456789' }, appId)).status).toBe(401);
});

it('pins only the owner of a pattern with * in the repository name, so each repository of that owner still matches', async () => {
  const { appId, adminKey, ruleId } = await appWithRule({ subjectPattern: 'repo:acme/mobile-*:ref:refs/heads/main', scopes: ['builds:write'] });
  expect((await exchange({}, appId)).status).toBe(200);
  expect(await ruleOf(appId, adminKey, ruleId)).toMatchObject({ repositoryId: null, repositoryOwnerId: '4242' });
  h.clock.advance(1000);
  const other = { repository: 'acme/mobile-ios', repository_id: '55501', sub: 'repo:acme/mobile-ios:ref:refs/heads/main' };
  expect((await exchange(other, appId)).status).toBe(200);
  h.clock.advance(1000);
  expect((await exchange({ ...other, repository_owner_id: '777' }, appId)).status).toBe(401);
});

it('keeps the ids a rule was created with', async () => {
  const { appId, adminKey, ruleId } = await appWithRule({
    subjectPattern: 'repo:acme/mobile-app:ref:refs/heads/main',
    scopes: ['builds:write'],
    repositoryId: '123456789',
    repositoryOwnerId: '4242',
  });
  expect((await exchange({}, appId)).status).toBe(200);
  expect(await ruleOf(appId, adminKey, ruleId)).toMatchObject({ repositoryId: '123456789', repositoryOwnerId: '4242' });
  expect(await auditOf(appId, 'oidc.rule_pinned')).toHaveLength(0);
});

it('lets exactly one of two jobs racing to pin a fresh rule through', async () => {
  const { appId, adminKey, ruleId } = await appWithRule({ subjectPattern: 'repo:acme/mobile-app:ref:refs/heads/main', scopes: ['builds:write'] });
  const statuses = (await Promise.all([exchange({}, appId), exchange({ repository_id: '999000111' }, appId)])).map((r) => r.status);
  expect(statuses.sort()).toEqual([200, 401]);
  const pinned = (await ruleOf(appId, adminKey, ruleId)).repositoryId;
  expect(['123456789', '999000111']).toContain(pinned);
  expect(await auditOf(appId, 'oidc.rule_pinned')).toHaveLength(1);
});
