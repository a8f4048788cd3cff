// Protects: the staff schema's connections page without duplicates or gaps (ties of time included), refuse tampered
// cursors and cursors of other arguments, filter builds by platform, version, grade and time, find objects by id
// (node, nodes) only for callers allowed to read them, keep the deprecated lists answering, and authorize every
// field as before (support reads, admins read the service's audit log, an app credential sees its own app only).
import { startHarness, bearer, readJson, type Harness } from '../support/harness';
import { appPrincipal, executeAs, seedBuild, seedScan, seedThreat } from '../support/staff-seed';
import type { BuildDoc } from '../../src/data/builds-repo';

let h: Harness;
let support: string;
let admin: string;
beforeAll(async () => {
  h = await startHarness({ jobs: false });
  support = await h.newStaff('support');
  admin = await h.newStaff('admin');
});
afterAll(async () => h.close());

async function gql(token: string, query: string, variables?: Record<string, unknown>) {
  const res = await h.api('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...bearer(token) },
    body: JSON.stringify({ query, variables }),
  });
  return readJson(res);
}

const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 0, minute));
const newestFirst = (a: BuildDoc, b: BuildDoc) => b.createdAt.getTime() - a.createdAt.getTime() || (a._id < b._id ? 1 : -1);

const BUILDS = `query($app: ID!, $first: Int, $after: String, $filter: BuildFilter) {
  app(id: $app) { builds(first: $first, after: $after, filter: $filter) {
    edges { cursor node { id } } nodes { id platform version grade } totalCount
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  } }
}`;

describe('App.builds', () => {
  let appId: string;
  let builds: BuildDoc[];
  beforeAll(async () => {
    ({ appId } = await h.newApp());
    builds = [];
    // Three builds share one instant: the id orders them, and paging must neither repeat nor skip one.
    for (const [minute, platform, version, grade] of [
      [1, 'android', '1.0.0', 'A'],
      [2, 'ios', '1.0.0', 'C'],
      [3, 'android', '1.1.0', 'C+'],
      [3, 'android', '1.1.0', undefined],
      [3, 'ios', '1.1.0', 'F'],
      [4, 'android', '1.2.0', 'A'],
      [5, 'ios', '1.2.0', undefined],
    ] as const) {
      builds.push(await seedBuild(h.deps, appId, { createdAt: at(minute), platform, version, grade }));
    }
    builds.sort(newestFirst);
  });

  it('pages newest first without duplicates or gaps, ties broken by id', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    let pages = 0;
    for (;;) {
      const body = await gql(support, BUILDS, { app: appId, first: 3, after });
      expect(body.errors).toBeUndefined();
      const page = body.data.app.builds;
      expect(page.totalCount).toBe(7);
      expect(page.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual(page.nodes.map((n: { id: string }) => n.id));
      expect(page.pageInfo.hasPreviousPage).toBe(after !== null);
      expect(page.pageInfo.startCursor).toBe(page.edges[0].cursor);
      expect(page.pageInfo.endCursor).toBe(page.edges[page.edges.length - 1].cursor);
      seen.push(...page.nodes.map((n: { id: string }) => n.id));
      pages += 1;
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual(builds.map((b) => b._id));
  });

  it('resumes after any edge cursor, not only the last one', async () => {
    const first = (await gql(support, BUILDS, { app: appId, first: 4 })).data.app.builds;
    const second = (await gql(support, BUILDS, { app: appId, first: 2, after: first.edges[1].cursor })).data.app.builds;
    expect(second.nodes.map((n: { id: string }) => n.id)).toEqual(builds.slice(2, 4).map((b) => b._id));
  });

  it('filters by platform, version, grade and time, each page bound to its filter', async () => {
    const ids = async (filter: Record<string, unknown>) => {
      const body = await gql(support, BUILDS, { app: appId, first: 100, filter });
      expect(body.errors).toBeUndefined();
      return body.data.app.builds.nodes.map((n: { id: string }) => n.id);
    };
    const expected = (keep: (b: BuildDoc) => boolean) => builds.filter(keep).map((b) => b._id);
    expect(await ids({ platform: 'ios' })).toEqual(expected((b) => b.platform === 'ios'));
    expect(await ids({ version: '1.1.0' })).toEqual(expected((b) => b.version === '1.1.0'));
    expect(await ids({ grade: 'C' })).toEqual(expected((b) => b.grade === 'C'));
    expect(await ids({ platform: 'android', grade: 'A' })).toEqual(expected((b) => b.platform === 'android' && b.grade === 'A'));
    expect(await ids({ from: at(2).toISOString(), to: at(4).toISOString() })).toEqual(expected((b) => b.createdAt >= at(2) && b.createdAt < at(4)));
    const counted = await gql(support, BUILDS, { app: appId, first: 1, filter: { grade: 'C' } });
    expect(counted.data.app.builds.totalCount).toBe(1);
  });

  it('refuses bad filters and page sizes precisely', async () => {
    const bad = await gql(support, BUILDS, { app: appId, first: 5, filter: { grade: 'Z', from: at(4).toISOString(), to: at(2).toISOString() } });
    expect(bad.errors[0].extensions.code).toBe('validation_failed');
    expect(bad.errors[0].extensions.errors).toEqual([
      { pointer: '/filter/grade', message: 'must be one of A+, A, A-, B+, B, B-, C+, C, C-, D+, D, D-, F' },
      { pointer: '/filter/to', message: 'must be after from' },
    ]);
    for (const first of [0, 101]) {
      const body = await gql(support, BUILDS, { app: appId, first });
      expect(body.errors[0].extensions.errors).toEqual([{ pointer: '/first', message: 'must be 1 to 100' }]);
    }
  });

  it('refuses a tampered cursor, and a cursor of another filter or app', async () => {
    const page = (await gql(support, BUILDS, { app: appId, first: 2, filter: { platform: 'android' } })).data.app.builds;
    const cursor: string = page.pageInfo.endCursor;
    const [body, mac] = cursor.split('.');
    const position = JSON.parse(Buffer.from(body, 'base64url').toString());
    position.p[0] += 1;
    const forged = `${Buffer.from(JSON.stringify(position)).toString('base64url')}.${mac}`;
    const tampered = await gql(support, BUILDS, { app: appId, first: 2, after: forged, filter: { platform: 'android' } });
    expect(tampered.errors[0].extensions.code).toBe('invalid_cursor');
    expect(tampered.errors[0].message).toBe('The cursor is not valid; pass endCursor or an edge cursor exactly as returned.');
    expect(tampered.data.app).toBeNull();

    const otherFilter = await gql(support, BUILDS, { app: appId, first: 2, after: cursor, filter: { platform: 'ios' } });
    expect(otherFilter.errors[0].extensions.code).toBe('invalid_cursor');
    expect(otherFilter.errors[0].message).toBe('The cursor belongs to another query; start again without it.');

    const { appId: otherApp } = await h.newApp();
    const otherAppPage = await gql(support, BUILDS, { app: otherApp, first: 2, after: cursor, filter: { platform: 'android' } });
    expect(otherAppPage.errors[0].message).toBe('The cursor belongs to another query; start again without it.');

    // A cursor of another connection (the app's scans) is not a builds cursor either.
    const scans = await gql(support, 'query($app: ID!) { app(id: $app) { scans(first: 1) { pageInfo { endCursor } } } }', { app: appId });
    expect(scans.data.app.scans.pageInfo.endCursor).toBeNull(); // no scans yet: an empty page has no cursor
  });

  it("shows each build's app, newest static scan and grade, and the app's latest build", async () => {
    const graded = builds.find((b) => b.grade === 'C')!;
    await seedScan(h.deps, graded, { engine: 'preview', grade: 'B', createdAt: graded.createdAt });
    const older = await seedScan(h.deps, graded, { engine: 'static', grade: 'D', createdAt: at(10) });
    const newest = await seedScan(h.deps, graded, { engine: 'static', grade: 'C', createdAt: at(11) });
    const body = await gql(
      support,
      `query($id: ID!, $app: ID!) {
        build(id: $id) { id grade app { id } latestStaticScan { id grade build { id } app { id } } scans { id engine } }
        app(id: $app) { latestBuild { id } ios: latestBuild(platform: ios) { id } android: latestBuild(platform: android) { id } }
      }`,
      { id: graded._id, app: appId },
    );
    expect(body.errors).toBeUndefined();
    expect(body.data.build).toEqual({
      id: graded._id,
      grade: 'C',
      app: { id: appId },
      latestStaticScan: { id: newest._id, grade: 'C', build: { id: graded._id }, app: { id: appId } },
      scans: [expect.objectContaining({ engine: 'preview' }), { id: older._id, engine: 'static' }, { id: newest._id, engine: 'static' }],
    });
    expect(body.data.app).toEqual({
      latestBuild: { id: builds[0]._id },
      ios: { id: builds.find((b) => b.platform === 'ios')!._id },
      android: { id: builds.find((b) => b.platform === 'android')!._id },
    });
    // A build scanned before grades were stored on builds reads its grade from its newest static scan.
    const unstored = builds.find((b) => b.grade === undefined)!;
    await seedScan(h.deps, unstored, { engine: 'static', grade: 'D-', createdAt: at(12) });
    expect((await gql(support, 'query($id: ID!) { build(id: $id) { grade } }', { id: unstored._id })).data.build.grade).toBe('D-');
  });
});

describe('other connections', () => {
  it('pages threats newest first and never leads to another app\'s build', async () => {
    const { appId } = await h.newApp();
    const { appId: otherApp } = await h.newApp();
    const own = await seedBuild(h.deps, appId, { createdAt: at(1) });
    const foreign = await seedBuild(h.deps, otherApp, { createdAt: at(1) });
    const threats = [];
    for (let i = 0; i < 5; i++) threats.push(await seedThreat(h.deps, appId, { occurredAt: at(20 + (i % 3)), buildId: i % 2 ? own._id : foreign._id }));
    threats.sort((a, b) => b.occurredAt.getTime() - a.occurredAt.getTime() || (a._id < b._id ? 1 : -1));
    const query = `query($app: ID!, $after: String) { app(id: $app) { threats(first: 2, after: $after) {
      nodes { id app { id } build { id } } pageInfo { hasNextPage endCursor } totalCount } } }`;
    const seen: Array<{ id: string; build: { id: string } | null }> = [];
    let after: string | null = null;
    do {
      const body = await gql(support, query, { app: appId, after });
      expect(body.errors).toBeUndefined();
      const page = body.data.app.threats;
      expect(page.totalCount).toBeNull();
      seen.push(...page.nodes);
      after = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null;
    } while (after);
    expect(seen.map((t) => t.id)).toEqual(threats.map((t) => t._id));
    for (const t of threats) {
      expect(seen.find((s) => s.id === t._id)!.build).toEqual(t.buildId === own._id ? { id: own._id } : null);
    }
  });

  it('pages scans by engine, trust rules and keys (never a secret), with counts', async () => {
    const { appId } = await h.newApp();
    const build = await seedBuild(h.deps, appId, { createdAt: at(1) });
    await seedScan(h.deps, build, { engine: 'preview', grade: 'A', createdAt: at(2) });
    const staticScan = await seedScan(h.deps, build, { engine: 'static', grade: 'B', createdAt: at(3) });
    const keys = [await h.newKey(appId, ['builds:read']), await h.newKey(appId, ['rules:read'])];
    await gql(admin, 'mutation($id: ID!) { revokeApiKey(id: $id) { id } }', { id: keys[0].id });
    const rule = await gql(admin, 'mutation($app: ID!) { createOidcRule(appId: $app, input: { subjectPattern: "repo:acme/app:ref:refs/heads/main", scopes: ["builds:write"] }) { id } }', { app: appId });
    const body = await gql(
      support,
      `query($app: ID!) { app(id: $app) {
        scans(first: 5, engine: static) { nodes { id engine build { id } } totalCount }
        all: scans { totalCount }
        oidcRules { nodes { id subjectPattern } totalCount }
        trustRules { nodes { id subjectPattern } totalCount }
        keys { nodes { id revokedAt } totalCount }
        live: keys(includeRevoked: false) { nodes { id } totalCount }
      } }`,
      { app: appId },
    );
    expect(body.errors).toBeUndefined();
    const app = body.data.app;
    expect(app.scans).toEqual({ nodes: [{ id: staticScan._id, engine: 'static', build: { id: build._id } }], totalCount: 1 });
    expect(app.all.totalCount).toBe(2);
    expect(app.oidcRules).toEqual({ nodes: [{ id: rule.data.createOidcRule.id, subjectPattern: 'repo:acme/app:ref:refs/heads/main' }], totalCount: 1 });
    // The former name, deprecated, answers the same list.
    expect(app.trustRules).toEqual(app.oidcRules);
    expect(app.keys.totalCount).toBe(2);
    expect(app.keys.nodes.map((k: { id: string }) => k.id).sort()).toEqual(keys.map((k) => k.id).sort());
    expect(app.live).toEqual({ nodes: [{ id: keys[1].id }], totalCount: 1 });
    // svc_<mode>_<id>_<secret>: the secret is base64url and may hold '_' itself, so it is all that follows the id.
    expect(JSON.stringify(body)).not.toContain(keys[1].key.split('_').slice(3).join('_'));
  });

  it('pages apps by plan, and the audit log for admins only', async () => {
    const created = [(await h.newApp('enterprise')).appId, (await h.newApp('enterprise')).appId, (await h.newApp('enterprise')).appId];
    const query = `query($after: String) { appsConnection(first: 2, after: $after, filter: { plan: enterprise }) {
      nodes { id plan } pageInfo { hasNextPage endCursor } totalCount } }`;
    const first = (await gql(support, query)).data.appsConnection;
    const second = (await gql(support, query, { after: first.pageInfo.endCursor })).data.appsConnection;
    expect(first.totalCount).toBe(3);
    expect([...first.nodes, ...second.nodes].map((a: { id: string }) => a.id).sort()).toEqual([...created].sort());
    expect(second.pageInfo.hasNextPage).toBe(false);
    // Every app, counted from the collection's metadata.
    const everyApp = await gql(support, '{ appsConnection(first: 1) { totalCount } }');
    expect(everyApp.data.appsConnection.totalCount).toBe(await h.deps.db.collection('apps').countDocuments());

    const log = '{ auditLogConnection(first: 3, action: "app.created") { nodes { id action targetAppId } pageInfo { hasNextPage } totalCount } }';
    const refused = await gql(support, log);
    expect(refused.errors[0].extensions.code).toBe('insufficient_scope');
    const allowed = await gql(admin, log);
    expect(allowed.errors).toBeUndefined();
    expect(allowed.data.auditLogConnection.nodes).toHaveLength(3);
    expect(allowed.data.auditLogConnection.nodes.every((e: { action: string }) => e.action === 'app.created')).toBe(true);
    expect(allowed.data.auditLogConnection.totalCount).toBeNull();
    const unknown = await gql(admin, '{ auditLogConnection(action: "nope") { totalCount } }');
    expect(unknown.errors[0].extensions.errors[0].pointer).toBe('/action');
  });
});

describe('node lookups', () => {
  it('finds every type by id, and nodes() keeps the order with null for unknown ids', async () => {
    const { appId } = await h.newApp();
    const build = await seedBuild(h.deps, appId, { createdAt: at(1) });
    const scan = await seedScan(h.deps, build, { engine: 'static', grade: 'A', createdAt: at(2) });
    const threat = await seedThreat(h.deps, appId, { occurredAt: at(3) });
    const key = await h.newKey(appId, ['rules:read']);
    const rule = (await gql(admin, 'mutation($app: ID!) { createOidcRule(appId: $app, input: { subjectPattern: "repo:acme/app:ref:refs/heads/main", scopes: ["builds:write"] }) { id } }', { app: appId })).data
      .createOidcRule.id;
    const audit = (await h.deps.repos.audit.list(null, { limit: 1 })).data[0];
    const ids = [appId, build._id, scan._id, threat._id, key.id, rule, audit._id, 'bld_doesnotexist0000000', 'nonsense'];
    const body = await gql(admin, 'query($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }', { ids });
    expect(body.errors).toBeUndefined();
    expect(body.data.nodes).toEqual([
      { __typename: 'App', id: appId },
      { __typename: 'Build', id: build._id },
      { __typename: 'Scan', id: scan._id },
      { __typename: 'Threat', id: threat._id },
      { __typename: 'ApiKey', id: key.id },
      { __typename: 'OidcRule', id: rule },
      { __typename: 'AuditEvent', id: audit._id },
      null,
      null,
    ]);
    const one = await gql(support, 'query($id: ID!) { node(id: $id) { id ... on Build { version app { id } } } }', { id: build._id });
    expect(one.data.node).toEqual({ id: build._id, version: '1.0.0', app: { id: appId } });
    const tooMany = await gql(support, 'query($ids: [ID!]!) { nodes(ids: $ids) { id } }', { ids: Array.from({ length: 101 }, (_, i) => `bld_${i}`) });
    expect(tooMany.errors[0].extensions.errors).toEqual([{ pointer: '/ids', message: 'at most 100 ids' }]);
  });

  it('gives an app credential its own objects only: another app\'s are null, as unknown ids', async () => {
    const { appId } = await h.newApp();
    const { appId: otherApp } = await h.newApp();
    const own = await seedBuild(h.deps, appId, { createdAt: at(1) });
    const foreign = await seedBuild(h.deps, otherApp, { createdAt: at(1) });
    const foreignScan = await seedScan(h.deps, foreign, { engine: 'static', grade: 'A', createdAt: at(2) });
    const foreignThreat = await seedThreat(h.deps, otherApp, { occurredAt: at(3) });
    const ownThreat = await seedThreat(h.deps, appId, { occurredAt: at(3), buildId: foreign._id });
    const principal = await appPrincipal(h.deps, (await h.newKey(appId, ['builds:read', 'scans:read', 'threats:read', 'rules:read'])).key);
    const result = await executeAs(h.deps, principal, 'query($ids: [ID!]!) { nodes(ids: $ids) { __typename id ... on Threat { build { id } } } }', {
      ids: [own._id, foreign._id, foreignScan._id, foreignThreat._id, otherApp, appId, ownThreat._id],
    });
    expect(result.errors).toBeUndefined();
    expect(result.data!.nodes).toEqual([{ __typename: 'Build', id: own._id }, null, null, null, null, null, { __typename: 'Threat', id: ownThreat._id, build: null }]);
    // Staff-only connections stay staff-only for an app credential that reaches its build's app.
    const keys = await executeAs(h.deps, principal, 'query($id: ID!) { node(id: $id) { ... on Build { app { keys { totalCount } } } } }', { id: own._id });
    expect(keys.errors![0].message).toBe('Staff only.');
  });
});

describe('deprecated lists', () => {
  it('still answer, and say what replaces them', async () => {
    const { appId } = await h.newApp();
    await seedBuild(h.deps, appId, { createdAt: at(1) });
    const body = await gql(
      admin,
      `query($app: ID!) {
        apps(limit: 1) { id }
        builds(appId: $app) { id }
        app(id: $app) { apiKeys { id } }
      }`,
      { app: appId },
    );
    expect(body.errors).toBeUndefined();
    expect(body.data.builds).toHaveLength(1);
    const schema = await gql(support, '{ __type(name: "Query") { fields(includeDeprecated: true) { name isDeprecated deprecationReason } } }');
    const deprecated = Object.fromEntries(
      schema.data.__type.fields.filter((f: { isDeprecated: boolean }) => f.isDeprecated).map((f: { name: string; deprecationReason: string }) => [f.name, f.deprecationReason]),
    );
    expect(deprecated).toEqual({
      apps: 'Use appsConnection.',
      builds: 'Use App.builds, a connection with filters.',
    });
  });
});
