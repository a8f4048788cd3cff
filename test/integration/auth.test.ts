// Protects: API-key authentication (every failure is the same 401, revocation is immediate, staff tokens are not
// API credentials), scope checks (403 insufficient_scope), tenant isolation (another app is 404), and whoami.
import { startHarness, bearer, type Harness, readJson } from '../support/harness';
import { revokeApiKey } from '../../src/services/keys-service';
import { operatorContext } from '../../src/services/operator-context';
import { createDeps, closeDeps } from '../../src/bootstrap';
import { authenticateApiRequest } from '../../src/auth/authenticate';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h.close());

async function problem(res: Response) {
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const body = await readJson(res);
  const { instance, ...rest } = body;
  expect(instance).toMatch(/^urn:shieldgate:request:/);
  return rest;
}

// A key is svc_<mode>_<id>_<secret>; the secret is base64url, so it may itself contain underscores.
const idOf = (key: string) => key.split('_')[2];
const secretOf = (key: string) => key.split('_').slice(3).join('_');

describe('whoami', () => {
  it('describes the API key without its secret', async () => {
    const { appId } = await h.newApp('indie');
    const { key } = await h.newKey(appId, ['builds:read', 'threats:read']);
    const res = await h.api('/v1/whoami', { headers: bearer(key) });
    expect(res.status).toBe(200);
    const body = await readJson(res);
    expect(body).toEqual({ appId, plan: 'indie', scopes: ['builds:read', 'threats:read'], auth: 'api_key', expiresAt: null });
    expect(JSON.stringify(body)).not.toContain(secretOf(key));
  });

  it('accepts test keys as test keys', async () => {
    const { appId } = await h.newApp();
    const { key } = await h.newKey(appId, ['builds:read'], 'test');
    expect(key).toMatch(/^svc_test_/);
    expect((await h.api('/v1/whoami', { headers: bearer(key) })).status).toBe(200);
  });
});

describe('every kind of bad credential gets the same 401', () => {
  it('answers missing, malformed, unknown, wrong-secret, wrong-mode, revoked and staff credentials alike', async () => {
    const { appId } = await h.newApp();
    const good = await h.newKey(appId, ['builds:read']);
    const revoked = await h.newKey(appId, ['builds:read']);
    await revokeApiKey(operatorContext(h.deps), revoked.id);
    const staff = await h.newStaff('admin');
    const [id, secret] = [idOf(good.key), secretOf(good.key)];
    const variants: Record<string, Record<string, string>> = {
      missing: {},
      emptyBearer: { authorization: 'Bearer ' },
      basic: { authorization: 'Basic dXNlcjpwYXNz' },
      garbage: { authorization: 'Bearer not-a-key' },
      unknownId: { authorization: `Bearer svc_live_${'Z'.repeat(20)}_${secret}` },
      wrongSecret: { authorization: `Bearer svc_live_${id}_${'A'.repeat(43)}` },
      wrongMode: { authorization: `Bearer svc_test_${id}_${secret}` },
      revoked: bearer(revoked.key),
      staffToken: bearer(staff),
      fakeJwt: { authorization: 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.' + 'x' },
    };
    const bodies = new Set<string>();
    for (const [name, headers] of Object.entries(variants)) {
      const res = await h.api('/v1/whoami', { headers });
      expect({ name, status: res.status }).toEqual({ name, status: 401 });
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="shieldgate"');
      bodies.add(JSON.stringify(await problem(res)));
    }
    expect(bodies.size).toBe(1);
    expect(JSON.parse([...bodies][0])).toMatchObject({ status: 401, code: 'unauthorized', type: 'https://shieldgate.dev/problems/unauthorized' });
    // The good key still works: none of the above disturbed it.
    expect((await h.api('/v1/whoami', { headers: bearer(good.key) })).status).toBe(200);
  });

  it('refuses a revoked key on its very next request', async () => {
    const { appId } = await h.newApp();
    const k = await h.newKey(appId, ['builds:read']);
    expect((await h.api('/v1/whoami', { headers: bearer(k.key) })).status).toBe(200);
    await revokeApiKey(operatorContext(h.deps), k.id);
    expect((await h.api('/v1/whoami', { headers: bearer(k.key) })).status).toBe(401);
  });

  it('stores only a hash of the secret', async () => {
    const { appId } = await h.newApp();
    const k = await h.newKey(appId, ['builds:read']);
    const doc = await h.deps.db.collection('api_keys').findOne({ _id: k.id as never });
    expect(JSON.stringify(doc)).not.toContain(secretOf(k.key));
    expect(doc?.secretHash).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('the apps an instance remembers', () => {
  it('are its own: a second instance in the same process reads the app afresh', async () => {
    const { appId } = await h.newApp('indie');
    const { key } = await h.newKey(appId, ['builds:read']);
    expect(await readJson(await h.api('/v1/whoami', { headers: bearer(key) }))).toMatchObject({ plan: 'indie' });
    await h.deps.db.collection('apps').updateOne({ _id: appId as never }, { $set: { plan: 'scale' } });
    // This instance serves its remembered copy for up to half a minute (a plan is not a security boundary)...
    expect(await readJson(await h.api('/v1/whoami', { headers: bearer(key) }))).toMatchObject({ plan: 'indie' });
    // ...while another instance over the same database, in the same process, has nothing remembered and reads it.
    const other = await createDeps(h.config, { clock: h.clock, mongo: h.deps.mongo });
    try {
      const result = await authenticateApiRequest(other, `Bearer ${key}`);
      expect(result.ok && result.principal.kind === 'api_key' && result.principal.plan).toBe('scale');
    } finally {
      await closeDeps(other, { closeMongo: false });
    }
  });
});

describe('scopes and tenants', () => {
  it('answers 403 insufficient_scope when the key lacks the scope', async () => {
    const { appId } = await h.newApp();
    const { key } = await h.newKey(appId, ['builds:read']);
    const res = await h.api(`/v1/apps/${appId}/audit-events`, { headers: bearer(key) });
    expect(res.status).toBe(403);
    expect(await problem(res)).toMatchObject({ code: 'insufficient_scope', status: 403 });
  });

  it("answers 404 for another app's resources, exactly as for an unknown app", async () => {
    const mine = await h.newApp();
    const theirs = await h.newApp();
    const { key } = await h.newKey(mine.appId, ['rules:read']);
    const other = await h.api(`/v1/apps/${theirs.appId}/audit-events`, { headers: bearer(key) });
    const unknown = await h.api('/v1/apps/app_doesnotexist00/audit-events', { headers: bearer(key) });
    expect(other.status).toBe(404);
    expect(unknown.status).toBe(404);
    const a = await problem(other);
    const b = await problem(unknown);
    expect(a).toEqual(b);
    expect((await h.api(`/v1/apps/${mine.appId}/audit-events`, { headers: bearer(key) })).status).toBe(200);
  });
});
