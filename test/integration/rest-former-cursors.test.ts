// Protects: REST lists read the GraphQL connections, and the page cursors REST issued before that (kinds `threats`
// and `audit`, bound to the same app and filter) still get the next page for one release; a cursor of that form
// stays bound to its query (another filter or app: 400 invalid_cursor). Also: GET /v1/apps/{id}/audit-events pages
// newest first through nextCursor, ending with nextCursor null.
import { startHarness, bearer, type Harness } from '../support/harness';
import { recordAudit } from '../../src/services/audit-service';
import { after, event, ingest, list } from './threats-support';
import { operatorContext } from '../../src/services/operator-context';

let h: Harness;
let appId: string;
let reader: string;
let rulesReader: string;
const t0 = new Date('2025-03-14T10:00:00.000Z');

/** The cursor GET /v1/apps/{id}/threats and /audit-events answered with before they read the connections. */
const formerCursor = (kind: 'threats' | 'audit', bound: unknown, item: { occurredAt: string; id: string }) =>
  h.deps.cursors.encode(kind, bound, [Date.parse(item.occurredAt), item.id]);

async function auditPage(key: string, app: string, query: Record<string, string | number>): Promise<{ status: number; body: any }> {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])).toString();
  const res = await h.api(`/v1/apps/${app}/audit-events?${qs}`, { headers: bearer(key) });
  return { status: res.status, body: await res.json() };
}

beforeAll(async () => {
  h = await startHarness({ now: after(t0, 24 * 3_600_000) });
  appId = (await h.newApp('enterprise')).appId;
  const device = (await h.newKey(appId, ['events:ingest'])).key;
  reader = (await h.newKey(appId, ['threats:read'])).key;
  rulesReader = (await h.newKey(appId, ['rules:read'])).key;
  const detections = ['hooking', 'emulator'];
  const events = Array.from({ length: 12 }, (_, i) => event(after(t0, i * 61_000), { detection: detections[i % 2], deviceId: `device-former-${i}` }));
  expect((await ingest(h.baseUrl, device, events)).status).toBe(202);
  for (let i = 0; i < 7; i++) {
    await recordAudit(operatorContext(h.deps, null), { appId, action: 'oidc.denied', subject: `repo:acme/app:ref:refs/heads/b${i}`, reason: 'not_trusted' });
    h.clock.advance(1000);
  }
});
afterAll(async () => h.close());

describe('threats', () => {
  it('takes a former page cursor and answers the page the current cursor gets', async () => {
    const first = await list(h, reader, appId, { detection: 'hooking', limit: 2 });
    expect(first.status).toBe(200);
    const former = formerCursor('threats', { appId, detection: 'hooking' }, first.body.data[1]);
    expect(former).not.toBe(first.body.nextCursor);
    const viaFormer = await list(h, reader, appId, { detection: 'hooking', limit: 2, cursor: former });
    const viaCurrent = await list(h, reader, appId, { detection: 'hooking', limit: 2, cursor: first.body.nextCursor });
    expect(viaFormer.status).toBe(200);
    expect(viaFormer.body).toEqual(viaCurrent.body);
    expect(viaFormer.body.data).toHaveLength(2);
    expect(viaFormer.body.data[0].occurredAt < first.body.data[1].occurredAt).toBe(true);
  });

  it('keeps a former cursor bound to its filter and app', async () => {
    const first = await list(h, reader, appId, { detection: 'hooking', limit: 2 });
    const former = formerCursor('threats', { appId, detection: 'hooking' }, first.body.data[1]);
    const other = await list(h, reader, appId, { detection: 'emulator', limit: 2, cursor: former });
    expect(other.status).toBe(400);
    expect(other.body.code).toBe('invalid_cursor');
    const { appId: otherApp } = await h.newApp('enterprise');
    const otherReader = (await h.newKey(otherApp, ['threats:read'])).key;
    const crossed = await list(h, otherReader, otherApp, { detection: 'hooking', limit: 2, cursor: former });
    expect(crossed.status).toBe(400);
    expect(crossed.body.code).toBe('invalid_cursor');
  });
});

describe('audit events', () => {
  it('pages newest first through nextCursor, ending with null', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      // The refusals only: the app's trail also holds its creation and its keys' (older than them).
      const page: { status: number; body: any } = await auditPage(rulesReader, appId, { limit: 3, action: 'oidc.denied', ...(cursor ? { cursor } : {}) });
      expect(page.status).toBe(200);
      seen.push(...page.body.data.map((e: any) => e.subject));
      expect(page.body.hasMore).toBe(page.body.nextCursor !== null);
      cursor = page.body.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(Array.from({ length: 7 }, (_, i) => `repo:acme/app:ref:refs/heads/b${6 - i}`));
  });

  it('takes a former page cursor, with or without an action, and answers the page the current cursor gets', async () => {
    for (const action of [null, 'oidc.denied']) {
      const query = { limit: 3, ...(action ? { action } : {}) };
      const first = await auditPage(rulesReader, appId, query);
      const former = formerCursor('audit', { appId, action }, first.body.data[2]);
      expect(former).not.toBe(first.body.nextCursor);
      const viaFormer = await auditPage(rulesReader, appId, { ...query, cursor: former });
      const viaCurrent = await auditPage(rulesReader, appId, { ...query, cursor: first.body.nextCursor });
      expect(viaFormer.status).toBe(200);
      expect(viaFormer.body).toEqual(viaCurrent.body);
      expect(viaFormer.body.data.map((e: any) => e.subject)).toEqual(['repo:acme/app:ref:refs/heads/b3', 'repo:acme/app:ref:refs/heads/b2', 'repo:acme/app:ref:refs/heads/b1']);
    }
  });

  it('refuses a tampered cursor, and a former one of another action', async () => {
    const first = await auditPage(rulesReader, appId, { limit: 3 });
    const [payload, mac] = String(first.body.nextCursor).split('.');
    const tampered = await auditPage(rulesReader, appId, { limit: 3, cursor: `${payload}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}` });
    expect(tampered.status).toBe(400);
    expect(tampered.body.code).toBe('invalid_cursor');
    const former = formerCursor('audit', { appId, action: null }, first.body.data[2]);
    const other = await auditPage(rulesReader, appId, { limit: 3, action: 'oidc.rule_created', cursor: former });
    expect(other.status).toBe(400);
    expect(other.body.code).toBe('invalid_cursor');
  });
});
