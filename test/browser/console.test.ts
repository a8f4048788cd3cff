/**
 * The staff console in a real browser (Debian's chromium through playwright-core) against the real service with
 * seeded data: sign-in, every view's numbers equal to the API's answers, revoke, the sign-in again after the token
 * dies, and no Content-Security-Policy violation anywhere. A screenshot of each view lands in test/artifacts/.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { startHarness, bearer, json, type Harness } from '../support/harness';
import { startOidcIssuer, type OidcIssuer } from '../support/oidc-issuer';
import { mintClassicToken, playIntegrityKeys, signerDigest } from '../support/play-integrity-tokens';
import { revokeStaff } from '../../src/services/keys-service';
import { CONSOLE_CSP, CONSOLE_DIST } from '../../src/http/console';
import { REPO_ROOT } from '../../src/core/paths';
import { launchChromium, screenshot, watchProblems, type PageProblems } from './browser';
import { HISTORY_BUILDS, seed, type Seeded } from './seed';
import { COMPARED_SCAN, SUPPRESSIONS, expectedFindings, shownDiff, shownFindings, shownRefs, shownSuppressions, type ApiComparedScan, type ApiSuppression } from './comparison-checks';
import { operatorContext } from '../../src/services/operator-context';
import { ATTEST_REASONS } from '../../console/src/views/attest-reasons';

const DAY = 86_400_000;
const isoDay = (t: number) => new Date(t).toISOString().slice(0, 10);

let h: Harness;
let issuer: OidcIssuer;
let data: Seeded;
let browser: Browser;
let admin: string;
let support: string;
let range: { from: string; to: string };

beforeAll(async () => {
  if (!fs.existsSync(path.join(CONSOLE_DIST, 'index.html'))) throw new Error('dist/console is missing: npm run build:console (npm test builds it)');
  issuer = await startOidcIssuer();
  // Trusted documents on: support staff may run only registered documents, so every view working proves the
  // console sends nothing else.
  const gitlab = issuer.at('/gitlab', '/oauth/discovery/keys');
  h = await startHarness({ env: { OIDC_ISSUER: issuer.url, OIDC_ALLOW_INSECURE_ISSUER: 'on', OIDC_ALLOWED_ISSUERS: gitlab.url, GRAPHQL_TRUSTED_DOCUMENTS: 'on' } });
  issuer.bind({ audience: h.baseUrl, now: () => h.clock.now() });
  data = await seed(h, issuer, gitlab);
  admin = await h.newStaff('admin');
  support = await h.newStaff('support');
  const now = h.clock.now().getTime();
  range = { from: isoDay(now - 6 * DAY), to: isoDay(now) };
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await h?.close();
  await issuer?.close();
});

/** What the API answers: the numbers the page must show (asked as an admin, who may run documents the console does not register). */
async function gql<T>(token: string, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const res = await h.api('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(token) }, body: JSON.stringify({ query, variables }) });
  const body = (await res.json()) as { data: T; errors?: unknown[] };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

const apiRange = () => ({ from: `${range.from}T00:00:00.000Z`, to: new Date(Date.parse(`${range.to}T00:00:00Z`) + DAY).toISOString() });

interface Session {
  page: Page;
  problems: PageProblems;
}

async function open(token: string, hash: string, before?: (page: Page) => void): Promise<Session> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  const problems = await watchProblems(page);
  before?.(page);
  await page.goto(`${h.baseUrl}/console#${hash}`);
  await page.fill('[data-control=token]', token);
  await page.click('button[type=submit]');
  await page.waitForSelector('.shell');
  return { page, problems };
}

const route = (view: string, extra: Record<string, string> = {}, appId = data.appId) => `/${view}?${new URLSearchParams({ app: appId, ...range, ...extra })}`;

/** Nothing refused by the policy, no script error: asserted at the end of every browser test. */
async function clean(s: Session): Promise<void> {
  expect(await s.problems.violations()).toEqual([]);
  expect(s.problems.errors).toEqual([]);
  await s.page.context().close();
}

/** The app's keys as the API lists them (the console's first page holds 25; the app has fewer). */
const appKeys = async () =>
  (await gql<{ app: { keys: { nodes: Array<{ id: string; revokedAt: string | null }> } } }>(admin, 'query($id: ID!) { app(id: $id) { keys(first: 100) { nodes { id revokedAt } } } }', { id: data.appId })).app.keys.nodes;

const cellText = (page: Page, selector: string) => page.$$eval(selector, (cells) => cells.map((c) => (c.textContent ?? '').trim()));

describe('serving', () => {
  it('answers the page with a strict policy and no caching, and its hashed assets as immutable', async () => {
    const res = await h.api('/console');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).toBe("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const html = await res.text();
    const assets = [...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]);
    expect(assets).toHaveLength(2);
    expect(html).not.toMatch(/https?:\/\//); // nothing from another origin
    for (const asset of assets) {
      const a = await h.api(asset);
      expect(a.status).toBe(200);
      expect(a.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(a.headers.get('content-type')).toMatch(asset.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
      expect(a.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
      expect(await a.text()).not.toMatch(/https?:\/\/(?!www\.w3\.org)[a-z]/i); // no CDN or font service in the bundle
    }
    const missing = await h.api('/console/assets/console-AAAAAAAA.js');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('cache-control')).toBe('no-store');
  });
});

describe('sign-in', () => {
  it('refuses a token the service does not accept, and keeps an accepted one out of storage, cookies and the URL', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems = await watchProblems(page);
    await page.goto(`${h.baseUrl}/console`);
    await page.fill('[data-control=token]', 'stf_nosuchid_abcdefghijklmnop');
    await page.click('button[type=submit]');
    await expect(page.textContent('.field-error')).resolves.toContain('did not accept this token');
    await screenshot(page, 'console-sign-in-refused');
    await page.fill('[data-control=token]', support);
    await page.click('button[type=submit]');
    await page.waitForSelector('.shell');
    expect(await page.textContent('.who')).toContain('support');
    const stored = await page.evaluate<{ local: number; session: number; cookie: string; url: string }>('({ local: localStorage.length, session: sessionStorage.length, cookie: document.cookie, url: location.href })');
    expect(stored).toEqual({ local: 0, session: 0, cookie: '', url: expect.not.stringContaining('stf_') });
    expect((await context.cookies()).length).toBe(0);
    // A reload forgets the token: it lived in the tab's memory only.
    await page.reload();
    await page.waitForSelector('[data-control=token]');
    await clean({ page, problems });
  });

  it('returns to sign-in with the reason when the token is revoked mid-session, and after signing out', async () => {
    const token = await h.newStaff('support');
    const s = await open(token, route('keys'));
    await s.page.waitForSelector('[data-table=keys]');
    await revokeStaff(operatorContext(h.deps), token.split('_')[1]);
    await s.page.click('[data-view=builds]');
    await s.page.waitForSelector('[data-notice]');
    expect(await s.page.textContent('[data-notice]')).toContain('expired or was revoked');
    await screenshot(s.page, 'console-token-revoked');

    await s.page.fill('[data-control=token]', support);
    await s.page.click('button[type=submit]');
    await s.page.waitForSelector('.shell');
    await s.page.click('[data-action=sign-out]');
    expect(await s.page.textContent('[data-notice]')).toContain('Signed out');
    await clean(s);
  });
});

describe('views', () => {
  it('threats: the table and tiles equal threatTrend for the range, asked for in the persisted-query form', async () => {
    const { app } = await gql<{ app: { threatTrend: Array<{ day: string; detection: string; threats: number; events: number; devices: number }> } }>(
      admin,
      'query($appId: ID!, $range: DateRange!) { app(id: $appId) { threatTrend(range: $range) { day detection threats events devices } } }',
      { appId: data.appId, range: apiRange() },
    );
    const threatStats = app.threatTrend;
    expect(threatStats.length).toBeGreaterThan(10);
    const bodies: Array<{ operationName: string; query?: string; extensions: { persistedQuery: { version: number; sha256Hash: string } } }> = [];
    const s = await open(support, route('threats'), (page) => page.on('request', (r) => r.url().endsWith('/graphql') && bodies.push(JSON.parse(r.postData() ?? '{}'))));
    await s.page.waitForSelector('[data-table=trend]');
    // Named operations by hash: the hash is the SHA-256 of the operation file's exact text (the trusted-document id).
    expect(bodies.map((b) => b.operationName)).toEqual(expect.arrayContaining(['Whoami', 'ConsoleApps', 'ThreatTrend']));
    const manifest = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'src', 'generated', 'trusted-documents.json'), 'utf8')) as Record<string, string>;
    for (const b of bodies) {
      const file = fs.readFileSync(path.join(REPO_ROOT, 'console', 'operations', `${b.operationName}.graphql`), 'utf8');
      const hash = createHash('sha256').update(file).digest('hex');
      expect(b.extensions.persistedQuery).toEqual({ version: 1, sha256Hash: hash });
      expect(manifest[`sha256:${hash}`]).toBe(file); // registered, so sent by hash alone (the server knows the text)
      expect(b.query).toBeUndefined();
    }
    await s.page.waitForSelector('.chart canvas');
    const rows = await s.page.$$eval('[data-table=trend] tbody tr', (trs) =>
      trs.map((tr) => ({
        day: tr.getAttribute('data-day'),
        detection: tr.getAttribute('data-detection'),
        threats: Number(tr.querySelector('[data-field=threats]')?.textContent?.replace(/,/g, '')),
        events: Number(tr.querySelector('[data-field=events]')?.textContent?.replace(/,/g, '')),
        devices: Number(tr.querySelector('[data-field=devices]')?.textContent?.replace(/,/g, '')),
      })),
    );
    const key = (p: { day: string | null; detection: string | null }) => `${p.day} ${p.detection}`;
    expect([...rows].sort((a, b) => key(a).localeCompare(key(b)))).toEqual([...threatStats].sort((a, b) => key(a).localeCompare(key(b))));
    const total = threatStats.reduce((sum, p) => sum + p.threats, 0);
    expect(await s.page.textContent('[data-stat=threats] .stat-value')).toBe(total.toLocaleString('en-US'));
    expect(await s.page.$$('.chart canvas')).toHaveLength(2); // the trend and events against devices
    await screenshot(s.page, 'console-threats');
    await clean(s);
  });

  it('top detections: each row equals threatBreakdown by detection, app version and build', async () => {
    const { app } = await gql<{ app: { threatBreakdown: Array<{ detection: string; appVersion: string | null; buildId: string | null; threats: number; events: number; devices: number }> } }>(
      admin,
      'query($appId: ID!, $range: DateRange!) { app(id: $appId) { threatBreakdown(range: $range, by: [detection, appVersion, buildId], first: 50) { detection appVersion buildId threats events devices } } }',
      { appId: data.appId, range: apiRange() },
    );
    expect(app.threatBreakdown.length).toBeGreaterThan(3);
    const s = await open(support, route('top'));
    await s.page.waitForSelector('[data-table=top]');
    const rows = await s.page.$$eval('[data-table=top] tbody tr', (trs) =>
      trs.map((tr) => ({
        detection: tr.getAttribute('data-detection'),
        appVersion: tr.getAttribute('data-version') || null,
        buildId: tr.getAttribute('data-build') || null,
        threats: Number(tr.querySelector('[data-field=threats]')?.textContent?.replace(/,/g, '')),
        events: Number(tr.querySelector('[data-field=events]')?.textContent?.replace(/,/g, '')),
        devices: Number(tr.querySelector('[data-field=devices]')?.textContent?.replace(/,/g, '')),
      })),
    );
    expect(rows).toEqual(app.threatBreakdown); // same rows, same order (biggest first)
    expect(rows.some((r) => r.appVersion === '2.4.1' && r.buildId === data.builds.risky)).toBe(true);
    // A build links to its findings.
    await s.page.click(`[data-build="${data.builds.risky}"] button.link`);
    await s.page.waitForSelector(`[data-panel=finding]`);
    await s.page.goBack();
    await s.page.waitForSelector('[data-table=top]');
    await screenshot(s.page, 'console-top-detections');
    await clean(s);
  });

  it('builds: grades equal the API, a build drills into its findings, "Load more" pages and the filters narrow', async () => {
    type ApiBuild = { id: string; grade: string | null; platform: string; scans: Array<{ id: string; engine: string; grade: string }> };
    const appBuilds = async (filter: Record<string, string> = {}) =>
      (
        await gql<{ app: { builds: { totalCount: number; nodes: ApiBuild[] } } }>(
          admin,
          'query($appId: ID!, $filter: BuildFilter) { app(id: $appId) { builds(first: 40, filter: $filter) { totalCount nodes { id grade platform scans { id engine grade } } } } }',
          { appId: data.appId, filter },
        )
      ).app.builds;
    const all = await appBuilds(); // one answer (40 builds with their scans fit the cost limit)
    expect(all.totalCount).toBe(HISTORY_BUILDS + 5); // the history, three builds of the risky package, the clean one, the pending one
    expect(all.nodes).toHaveLength(all.totalCount);
    const builds = all.nodes;
    const trend = await gql<{ app: { buildTrend: Array<{ day: string; builds: number; grades: Array<{ grade: string; count: number }> }> }; latestGradeDistribution: Array<{ grade: string; count: number }> }>(
      admin,
      'query($appId: ID!, $range: DateRange!) { app(id: $appId) { buildTrend(range: $range) { day builds grades { grade count } } } latestGradeDistribution { grade count } }',
      { appId: data.appId, range: apiRange() },
    );
    const s = await open(support, route('builds'));
    await s.page.waitForSelector('[data-table=builds]');
    await s.page.waitForSelector('[data-table=build-trend]');
    const trendRows = await s.page.$$eval('[data-table=build-trend] tr', (trs) =>
      trs.map((tr) => ({
        day: tr.getAttribute('data-day'),
        builds: Number(tr.querySelector('[data-field=builds]')?.textContent),
        grades: [...tr.querySelectorAll('[data-grade]')].map((g) => ({ grade: g.getAttribute('data-grade'), count: Number((g.textContent ?? '').replace(/^\D*\s/, '').trim()) })),
      })),
    );
    expect(trendRows).toEqual([...trend.app.buildTrend].reverse());
    const fleet = await s.page.$$eval('[data-panel=fleet] [data-grade]', (els) => els.map((e) => ({ grade: e.getAttribute('data-grade'), count: Number(e.querySelector('[data-field=count]')?.textContent) })));
    expect(fleet).toEqual(trend.latestGradeDistribution);
    const rowIds = () => s.page.$$eval('[data-table=builds] tbody tr', (trs) => trs.map((tr) => tr.getAttribute('data-build')));
    // A function, not a string: the page's policy refuses eval.
    const rowCount = (count: number) =>
      s.page.waitForFunction((c) => (globalThis as unknown as { document: { querySelectorAll(q: string): { length: number } } }).document.querySelectorAll('[data-table=builds] tbody tr').length === c, count);
    // The first page: the 25 newest, of the total the API counts.
    expect(await rowIds()).toEqual(builds.slice(0, 25).map((b) => b.id));
    expect(await s.page.textContent('[data-panel=builds] [data-field=shown]')).toBe('25');
    expect(await s.page.textContent('[data-panel=builds] [data-field=total]')).toBe(String(all.totalCount));
    for (const b of builds.slice(0, 25)) {
      const scan = b.scans.find((x) => x.engine === 'static') ?? b.scans.find((x) => x.engine === 'preview');
      expect(await s.page.textContent(`tr[data-build="${b.id}"] .grade`)).toBe(scan?.grade ?? '—');
    }
    const risky = builds.find((b) => b.id === data.builds.risky)!;
    const staticScan = risky.scans.find((x) => x.engine === 'static')!;
    type Inventory = { permissions: string[]; nativeLibraries: unknown[]; sdks: unknown[] };
    const { scan } = await gql<{ scan: { score: number; findings: Array<{ id: string; severity: string }>; inventory: Inventory } }>(admin, 'query($id: ID!) { scan(id: $id) { score findings { id severity } inventory { permissions nativeLibraries { path } sdks { name } } } }', { id: staticScan.id });
    expect(scan.findings.length).toBeGreaterThan(0);
    await s.page.click(`tr[data-build="${data.builds.risky}"]`);
    await s.page.waitForSelector(`[data-scan="${staticScan.id}"]`);
    expect(s.page.url()).toContain(`build=${data.builds.risky}`);
    expect(await s.page.textContent('[data-panel=finding] [data-field=score]')).toBe(String(scan.score));
    const shown = await s.page.$$eval('[data-finding]', (els) => els.map((e) => e.getAttribute('data-finding')));
    expect([...shown].sort()).toEqual(scan.findings.map((f) => f.id).sort());
    expect(shown).toEqual(expect.arrayContaining(['android.debuggable']));
    // The first build of its package: compared with nothing, every finding new.
    const first = (await gql<{ scan: ApiComparedScan }>(admin, COMPARED_SCAN, { id: staticScan.id })).scan;
    expect(first.baseline).toBeNull();
    expect(await s.page.getAttribute('[data-panel=finding] [data-baseline]', 'data-baseline')).toBe('');
    expect(await shownDiff(s.page)).toEqual({ ...first.diff, open: first.findings.filter((f) => !f.suppressed).length, suppressed: first.findings.filter((f) => f.suppressed).length });
    // The inventory as the API gives it: the requested permissions by name, and as many libraries and SDKs.
    expect(scan.inventory.permissions).toEqual(['android.permission.CAMERA', 'android.permission.READ_SMS']);
    expect(await s.page.textContent('[data-inventory] [data-field=permissions]')).toBe(scan.inventory.permissions.map((p) => p.replace('android.permission.', '')).join(', '));
    expect(await s.page.getAttribute('[data-inventory] [data-field=native-libraries]', 'data-count')).toBe(String(scan.inventory.nativeLibraries.length));
    expect(await s.page.getAttribute('[data-inventory] [data-field=sdks]', 'data-count')).toBe(String(scan.inventory.sdks.length));
    await screenshot(s.page, 'console-builds');

    // "Load more" reads the next page after the last cursor and appends it: every build once, in the API's order.
    await s.page.click('[data-panel=builds] [data-more]');
    await rowCount(all.totalCount);
    expect(await rowIds()).toEqual(builds.map((b) => b.id));
    expect(await s.page.$('[data-panel=builds] [data-more]')).toBeNull();
    expect(await s.page.textContent('[data-panel=builds] [data-field=shown]')).toBe(String(all.totalCount));

    // A grade: exactly the builds whose newest static scan has it, as many as the API counts.
    const grade = risky.grade!;
    expect(grade).toBe(staticScan.grade);
    const graded = await appBuilds({ grade });
    expect(graded.nodes.map((b) => b.id)).toContain(data.builds.risky);
    expect(graded.nodes.map((b) => b.id)).not.toContain(data.builds.clean);
    await s.page.selectOption('[data-panel=builds] select[name=grade]', grade);
    await rowCount(graded.totalCount);
    expect(await rowIds()).toEqual(graded.nodes.map((b) => b.id));
    expect(await s.page.$$eval('[data-table=builds] tbody tr', (trs) => trs.map((tr) => tr.getAttribute('data-grade')))).toEqual(graded.nodes.map(() => grade));
    expect(await s.page.textContent('[data-panel=builds] [data-field=total]')).toBe(String(graded.totalCount));
    await screenshot(s.page, 'console-builds-grade');

    // A platform: iOS builds only, across the page boundary of the unfiltered list.
    await s.page.selectOption('[data-panel=builds] select[name=grade]', '');
    await s.page.selectOption('[data-panel=builds] select[name=platform]', 'ios');
    const ios = await appBuilds({ platform: 'ios' });
    expect(ios.totalCount).toBeGreaterThan(1);
    await rowCount(ios.totalCount);
    expect(await rowIds()).toEqual(ios.nodes.map((b) => b.id));
    expect(await s.page.textContent('[data-panel=builds] [data-field=total]')).toBe(String(ios.totalCount));
    // A grade no iOS build has: the designed empty state.
    await s.page.selectOption('[data-panel=builds] select[name=grade]', grade);
    await s.page.waitForSelector('[data-panel=builds] .empty');
    expect(await s.page.textContent('[data-panel=builds] .empty')).toContain('No build matches these filters');
    await clean(s);
  });

  it('refused exchanges: per day and reason equal refusedExchanges, and the latest entries show the failed checks', async () => {
    const { app } = await gql<{ app: { refusedExchanges: Array<{ day: string; reason: string; provider: string; count: number }> } }>(
      admin,
      'query($appId: ID!, $range: DateRange!) { app(id: $appId) { refusedExchanges(range: $range) { day reason provider count } } }',
      { appId: data.appId, range: apiRange() },
    );
    const expected = new Map<string, number>();
    for (const r of app.refusedExchanges) expected.set(`${r.day} ${r.reason}`, (expected.get(`${r.day} ${r.reason}`) ?? 0) + r.count);
    const perProvider = new Map<string, number>();
    for (const r of app.refusedExchanges) perProvider.set(r.provider, (perProvider.get(r.provider) ?? 0) + r.count);
    expect([...perProvider.keys()].sort()).toEqual(['github', 'gitlab']);
    expect(new Set(app.refusedExchanges.map((r) => r.reason))).toEqual(new Set(['malformed', 'not_trusted', 'pull_request']));
    expect(new Set(app.refusedExchanges.map((r) => r.day)).size).toBe(4); // GitHub's refusals on three days, GitLab's on a fourth
    const s = await open(support, route('refused'));
    await s.page.waitForSelector('[data-table=refusals]');
    const cells = await s.page.$$eval('[data-table=refusals] tbody td[data-reason]', (tds) =>
      tds.map((td) => ({ key: `${td.closest('tr')?.getAttribute('data-day')} ${td.getAttribute('data-reason')}`, text: (td.textContent ?? '').trim() })),
    );
    const shown = new Map(cells.filter((c) => c.text !== '·').map((c) => [c.key, Number(c.text)]));
    expect(shown).toEqual(expected);
    const total = [...expected.values()].reduce((a, b) => a + b, 0);
    expect(await s.page.textContent('[data-stat=refusals] .stat-value')).toBe(String(total));
    // Each not_trusted entry says which check of the rule failed: the workflow of a nightly job, the subject of a branch.
    const outcomes = (await cellText(s.page, '[data-panel=denied] [data-outcome]')).join('\n');
    expect(outcomes).toMatch(/failed workflowRef: expected acme\/mobile-app\/.github\/workflows\/release.yml@refs\/heads\/main, token said acme\/mobile-app\/.github\/workflows\/nightly.yml/);
    expect(outcomes).toContain('refs/heads/feature/login');
    expect(await s.page.textContent('[data-panel=denied]')).toContain('job_workflow_ref');
    // Refusals per CI provider equal the API's, and each rule shows its provider and pins.
    const providers = await s.page.$$eval('[data-table=providers] [data-provider]', (lis) => lis.map((li) => [li.getAttribute('data-provider'), Number(li.querySelector('b')?.textContent)] as const));
    expect(new Map(providers)).toEqual(perProvider);
    expect(await s.page.textContent('[data-panel=rules] [data-provider=gitlab]')).toMatch(/gitlab[\s\S]*project_path:acme\/mobile-app[\s\S]*protected refs only yes/);
    expect(await s.page.textContent('[data-panel=denied]')).toContain('gitlab');
    await screenshot(s.page, 'console-refused-exchanges');
    await clean(s);
  });

  it('keys: support reads them without any revoke control', async () => {
    const keys = await appKeys();
    const s = await open(support, route('keys'));
    await s.page.waitForSelector('[data-table=keys]');
    expect((await s.page.$$eval('[data-table=keys] tbody tr', (trs) => trs.map((tr) => tr.getAttribute('data-key')))).sort()).toEqual(keys.map((k) => k.id).sort());
    expect(await s.page.$$('[data-table=keys] button')).toHaveLength(0);
    expect(await s.page.textContent('[data-panel=keys]')).toContain('support: read only');
    await screenshot(s.page, 'console-keys-support');
    await clean(s);
  });

  it('keys: an admin revokes one after confirming, and the API refuses it from then on', async () => {
    const before = await h.api('/v1/whoami', { headers: bearer(data.nightlyKey.key) });
    expect(before.status).toBe(200);
    const s = await open(admin, route('keys'));
    await s.page.waitForSelector('[data-table=keys]');
    const row = `tr[data-key="${data.nightlyKey.id}"]`;
    await s.page.click(`${row} button`);
    await s.page.waitForSelector('dialog[open]');
    expect(await s.page.textContent('dialog[open]')).toContain(data.nightlyKey.id);
    await screenshot(s.page, 'console-keys-revoke-dialog');
    // Cancel first: nothing happens.
    await s.page.click('dialog[open] .button-ghost');
    expect(await s.page.$('dialog[open]')).toBeNull();
    expect((await h.api('/v1/whoami', { headers: bearer(data.nightlyKey.key) })).status).toBe(200);
    await s.page.click(`${row} button`);
    await s.page.click('dialog[open] [data-confirm]');
    await s.page.waitForSelector('.notice');
    await s.page.locator(`${row} [data-field=status]`, { hasText: 'revoked' }).waitFor();
    expect(await s.page.$(`${row} button`)).toBeNull();
    expect((await h.api('/v1/whoami', { headers: bearer(data.nightlyKey.key) })).status).toBe(401);
    const keys = await appKeys();
    expect(keys.find((k) => k.id === data.nightlyKey.id)?.revokedAt).toEqual(expect.any(String));
    await screenshot(s.page, 'console-keys-admin');
    await clean(s);
  });

  it('an app with no data shows designed empty states in every view', async () => {
    const s = await open(support, route('threats', {}, data.quietAppId));
    for (const view of ['threats', 'top', 'builds', 'attestation', 'refused', 'suppressions', 'keys']) {
      await s.page.click(`[data-view=${view}]`);
      // Every panel done loading, and an empty state where data would be. A failed panel ends the wait too, so the
      // failure names the service's answer instead of a timeout. The bound is generous: on a machine loaded by the
      // other suites, the embedded database's reads queue behind their writes, and this test asserts what shows, not how soon.
      await s.page.waitForSelector(`.main[data-current=${view}] .empty, .main .error`, { timeout: 100_000 });
      expect(await s.page.$eval('.main', (main) => main.querySelector('.error')?.textContent ?? null)).toBeNull();
      await s.page.waitForSelector(`.main[data-current=${view}] .empty`);
      await s.page.waitForSelector('.main .loading', { state: 'detached', timeout: 100_000 });
      expect(await s.page.$('.main .error')).toBeNull();
      if (view === 'attestation') {
        // An app that never configured attestation: the stub answers it and is not counted; how to turn engines on.
        const empty = await s.page.textContent('.main[data-current=attestation] [data-panel=verdicts]');
        expect(empty).toContain('stub');
        expect(empty).toContain(`PUT /v1/apps/${data.quietAppId}/attestation`);
      }
      if (view === 'threats' || view === 'attestation' || view === 'refused' || view === 'suppressions') await screenshot(s.page, `console-empty-${view}`);
    }
    await clean(s);
  }, 300_000);
});

describe('device attestation', () => {
  // The seed's release-signed build (2.5.0): androidManifest's default package and versionCode, its signer recorded by
  // its verified release scan. Play Integrity tokens are minted with keys made here (only Google holds real ones).
  const PACKAGE = 'com.example.app';
  const VERSION_CODE = '7';
  const pi = playIntegrityKeys();
  let device: string;
  let signer: string;
  /** `${day} ${engine} ${verdict} ${reason}` -> the verdicts the service answered here. */
  const given = new Map<string, number>();
  const threats = { attested: '', plain: '' };

  type Answer = { verdict: string; reasons: string[]; engine: string; build: { id: string; version: string } | null; verdictToken?: string };
  async function verify(body: Record<string, unknown>): Promise<Answer> {
    const res = await h.api('/v1/attest/verify', { method: 'POST', headers: json(device), body: JSON.stringify(body) });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as Answer;
    const key = `${isoDay(h.clock.now().getTime())} ${answer.engine} ${answer.verdict} ${answer.reasons[0] ?? 'none'}`;
    given.set(key, (given.get(key) ?? 0) + 1);
    return answer;
  }
  async function challenge(): Promise<string> {
    const res = await h.api('/v1/attest/challenges', { method: 'POST', headers: bearer(device) });
    expect(res.status).toBe(201);
    return ((await res.json()) as { nonce: string }).nonce;
  }
  const token = (nonce: string, appIntegrity: Record<string, unknown> = {}) =>
    mintClassicToken(pi, { requestDetails: { requestPackageName: PACKAGE, nonce }, appIntegrity: { packageName: PACKAGE, certificateSha256Digest: [signerDigest(signer)], versionCode: VERSION_CODE, ...appIntegrity } }, { now: h.clock.now() });

  /** What a device does, and what the service must answer. */
  const attempts = {
    genuine: async () => {
      const nonce = await challenge();
      const answer = await verify({ token: await token(nonce), nonce, platform: 'android' });
      expect(answer).toMatchObject({ verdict: 'trusted', reasons: [], engine: 'play_integrity', build: { id: data.builds.clean, version: '2.5.0' } });
      return answer;
    },
    clone: async () => {
      const nonce = await challenge();
      const answer = await verify({ token: await token(nonce, { certificateSha256Digest: [signerDigest('ab'.repeat(32))] }), nonce, platform: 'android' });
      expect(answer).toMatchObject({ verdict: 'untrusted', reasons: ['signer_mismatch'] });
    },
    unregistered: async () => {
      const nonce = await challenge();
      const answer = await verify({ token: await token(nonce, { versionCode: '8' }), nonce, platform: 'android' });
      expect(answer).toMatchObject({ verdict: 'suspicious', reasons: ['version_unregistered'] });
    },
    replayed: async () => {
      const nonce = await challenge();
      await verify({ token: await token(nonce), nonce, platform: 'android' });
      expect(await verify({ token: await token(nonce), nonce, platform: 'android' })).toMatchObject({ verdict: 'untrusted', reasons: ['nonce_replayed'] });
    },
    // Not a JWE: a key attestation chain, an engine this app did not configure.
    chain: async () => {
      const nonce = await challenge();
      expect(await verify({ token: 'bm90LWEtY2VydGlmaWNhdGUtY2hhaW4', nonce, platform: 'android' })).toMatchObject({ verdict: 'untrusted', reasons: ['engine_unconfigured'], engine: 'key_attestation' });
    },
  };

  beforeAll(async () => {
    const team = (await h.newKey(data.appId, ['rules:read', 'rules:write', 'builds:read'])).key;
    device = (await h.newKey(data.appId, ['attest:verify', 'events:ingest'])).key;
    const configured = await h.api(`/v1/apps/${data.appId}/attestation`, { method: 'PUT', headers: json(team), body: JSON.stringify({ android: { packageName: PACKAGE, playIntegrity: pi.config } }) });
    expect(configured.status).toBe(200);
    const signers = (await (await h.api(`/v1/apps/${data.appId}/signers?package=${PACKAGE}`, { headers: bearer(team) })).json()) as { data: Array<{ sha256: string }> };
    signer = signers.data[0].sha256;

    // Three UTC days of verdicts. Challenges are purged by a TTL index on the real clock: the seed's clock runs two days
    // ahead of it (seedBaselines), so a challenge made two days back on it is still live.
    const start = h.clock.now().getTime();
    expect(start - 2 * DAY).toBeGreaterThan(Date.now() - 30 * 60_000);
    const plan: Array<[number, Array<keyof typeof attempts>]> = [
      [2, ['genuine', 'genuine', 'genuine', 'clone']],
      [1, ['genuine', 'unregistered', 'replayed', 'clone']],
      [0, ['clone', 'chain']],
    ];
    for (const [daysAgo, steps] of plan) {
      h.clock.set(start - daysAgo * DAY);
      for (const step of steps) await attempts[step]();
    }
    h.clock.set(start);

    // Two devices report a hooking threat on the release: one with the verdict token it just received, one without.
    const verdict = await attempts.genuine();
    const event = (name: string) => ({
      detection: 'hooking', verdict: 'compromised', confidence: 0.9, action: 'block', signals: [`frida_server_${name}`], platform: 'android',
      appVersion: '2.5.0', buildId: data.builds.clean, occurredAt: h.clock.now().toISOString(), deviceId: `device-console-${name}`,
    });
    for (const [name, extra] of [['attested', { verdictToken: verdict.verdictToken }], ['plain', {}]] as const) {
      const res = await h.api('/v1/events', { method: 'POST', headers: json(device), body: JSON.stringify({ ...extra, events: [event(name)] }) });
      expect(res.status).toBe(202);
    }
    const listed = await gql<{ app: { threats: { nodes: Array<{ id: string; signals: string[] }> } } }>(admin, 'query($id: ID!) { app(id: $id) { threats(first: 50) { nodes { id signals } } } }', { id: data.appId });
    for (const name of ['attested', 'plain'] as const) threats[name] = listed.app.threats.nodes.find((t) => t.signals.includes(`frida_server_${name}`))!.id;
  }, 120_000);

  it('the Attestation view: every cell equals attestVerdicts, with the stats, the reasons in words and the engines', async () => {
    const { app } = await gql<{ app: { attestVerdicts: Array<{ day: string; engine: string; verdict: string; reason: string; count: number }> } }>(
      admin,
      'query($appId: ID!, $range: DateRange!) { app(id: $appId) { attestVerdicts(range: $range) { day engine verdict reason count } } }',
      { appId: data.appId, range: apiRange() },
    );
    const expected = new Map(app.attestVerdicts.map((r) => [`${r.day} ${r.engine} ${r.verdict} ${r.reason}`, r.count]));
    expect(expected).toEqual(given); // each verdict the devices got, counted once
    expect(new Set(app.attestVerdicts.map((r) => r.day)).size).toBe(3);
    const s = await open(support, route('attestation'));
    await s.page.waitForSelector('[data-table=verdicts]');
    const cells = await s.page.$$eval('[data-table=verdicts] tbody td[data-reason]', (tds) =>
      tds.map((td) => {
        const tr = td.closest('tr');
        return { key: `${tr?.getAttribute('data-day')} ${tr?.getAttribute('data-engine')} ${td.getAttribute('data-verdict')} ${td.getAttribute('data-reason')}`, text: (td.textContent ?? '').trim() };
      }),
    );
    expect(new Map(cells.filter((c) => c.text !== '·').map((c) => [c.key, Number(c.text)]))).toEqual(expected);
    // Each row's total is the sum of its cells; days newest first.
    const days = await s.page.$$eval('[data-table=verdicts] tbody tr', (trs) => trs.map((tr) => tr.getAttribute('data-day')));
    expect(days).toEqual([...days].sort().reverse());

    const sum = (pick: (r: (typeof app.attestVerdicts)[number]) => boolean) => app.attestVerdicts.filter(pick).reduce((a, r) => a + r.count, 0);
    const total = sum(() => true);
    const trusted = sum((r) => r.verdict === 'trusted');
    expect(await s.page.textContent('[data-stat=verdicts] .stat-value')).toBe(String(total));
    expect(await s.page.textContent('[data-stat=trusted] .stat-value')).toBe(`${Math.round((trusted * 100) / total)}%`);
    expect(await s.page.textContent('[data-stat=suspicious] .stat-value')).toBe(String(sum((r) => r.verdict === 'suspicious')));
    expect(await s.page.textContent('[data-stat=untrusted-reason] .stat-value')).toBe('signer mismatch'); // the clones: 3 of 5 untrusted

    // The legend: each reason of the range once, in the words of attest-reasons.ts (docs/attestation.md's table).
    const legend = await s.page.$$eval('[data-legend] li', (lis) => lis.map((li) => ({ reason: li.getAttribute('data-reason'), text: li.textContent ?? '' })));
    expect(legend.map((l) => l.reason).sort()).toEqual([...new Set(app.attestVerdicts.map((r) => r.reason))].sort());
    for (const l of legend) expect(l.text).toContain(ATTEST_REASONS[l.reason!]);
    expect(await s.page.textContent('[data-legend] li[data-reason=signer_mismatch]')).toContain('clone');
    const engines = await s.page.$$eval('[data-table=engines] tbody tr', (trs) => trs.map((tr) => [tr.getAttribute('data-engine'), Number(tr.querySelector('[data-field=total]')?.textContent)]));
    expect(engines).toEqual([
      ['play_integrity', sum((r) => r.engine === 'play_integrity')],
      ['key_attestation', sum((r) => r.engine === 'key_attestation')],
    ]);
    await screenshot(s.page, 'console-attestation');
    await clean(s);
  });

  it('the threats view: a threat reported with a verdict token is attested, with the build the verdict named, and opens it', async () => {
    type ApiThreat = { id: string; attested: boolean; attestedBuildId: string | null; attestedBuild: { version: string; platform: string } | null };
    const { app } = await gql<{ app: { threats: { nodes: ApiThreat[] } } }>(
      admin,
      'query($id: ID!, $from: DateTime, $to: DateTime) { app(id: $id) { threats(first: 25, filter: { from: $from, to: $to }) { nodes { id attested attestedBuildId attestedBuild { version platform } } } } }',
      { id: data.appId, ...apiRange() },
    );
    const attested = app.threats.nodes.find((t) => t.id === threats.attested)!;
    expect(attested).toEqual({ id: threats.attested, attested: true, attestedBuildId: data.builds.clean, attestedBuild: { version: '2.5.0', platform: 'android' } });
    expect(app.threats.nodes.find((t) => t.id === threats.plain)).toMatchObject({ attested: false, attestedBuildId: null });
    const s = await open(support, route('threats'));
    await s.page.waitForSelector(`[data-table=threats] tr[data-threat="${threats.attested}"]`);
    // The first page as the API lists it, each threat attested or not as the API says.
    const rows = await s.page.$$eval('[data-table=threats] tbody tr', (trs) =>
      trs.map((tr) => ({ id: tr.getAttribute('data-threat'), attested: tr.getAttribute('data-attested') === 'true', attestedBuildId: tr.querySelector('[data-field=attested]')?.getAttribute('data-build') || null })),
    );
    expect(rows).toEqual(app.threats.nodes.map((t) => ({ id: t.id, attested: t.attested, attestedBuildId: t.attestedBuildId })));
    const row = `[data-table=threats] tr[data-threat="${threats.attested}"]`;
    expect(await s.page.textContent(`${row} [data-field=attested]`)).toBe('attested 2.5.0 · android');
    expect(await s.page.textContent(`[data-table=threats] tr[data-threat="${threats.plain}"] [data-field=attested]`)).toBe('not attested');
    expect(await s.page.textContent('[data-panel=threats] [data-field=attested]')).toBe(String(app.threats.nodes.filter((t) => t.attested).length));
    await screenshot(s.page, 'console-threats-attested');
    // The attested build opens with its findings.
    await s.page.click(`${row} [data-field=attested] button.link`);
    await s.page.waitForSelector('[data-panel=finding]');
    expect(s.page.url()).toContain(`build=${data.builds.clean}`);
    await clean(s);
  });
});

describe('comparison with the baseline, and suppressions', () => {
  const comparedScan = async (buildId: string) => {
    const { build } = await gql<{ build: { scans: Array<{ id: string; engine: string }> } }>(admin, 'query($id: ID!) { build(id: $id) { scans { id engine } } }', { id: buildId });
    return (await gql<{ scan: ApiComparedScan }>(admin, COMPARED_SCAN, { id: build.scans.find((x) => x.engine === 'static')!.id })).scan;
  };
  // The builds list loads beside the drill-down and may render it again once it arrives: read the drill-down only after
  // both are loaded.
  const openScan = async (s: { page: Page }, scan: ApiComparedScan) => {
    await s.page.waitForSelector('tr[data-build]');
    await s.page.waitForSelector('.main .loading', { state: 'detached' });
    await s.page.waitForSelector(`[data-scan="${scan.id}"] [data-diff]`);
  };

  it('a later build: its baseline, the counts, each finding new or existing (new first), suppressed ones with reason and expiry, and the fixed ones', async () => {
    const scan = await comparedScan(data.baselines.next);
    expect(scan.baseline?.buildId).toBe(data.builds.risky);
    const s = await open(support, route('builds', { build: data.baselines.next }));
    await openScan(s, scan);
    const suppressed = scan.findings.filter((f) => f.suppressed).length;
    expect(await shownDiff(s.page)).toEqual({ ...scan.diff, open: scan.findings.length - suppressed, suppressed });
    expect(await s.page.textContent('[data-panel=finding] .scan-score [data-field=open]')).toBe(String(scan.findings.length - suppressed));
    expect(await s.page.getAttribute('[data-baseline]', 'data-baseline')).toBe(scan.baseline!.scanId);
    await s.page.locator('[data-field=baseline-build]', { hasText: 'build 2.4.1' }).waitFor();
    // Every finding once with what the API says of it; new ones before existing ones.
    const shown = await shownFindings(s.page);
    const byFingerprint = (a: { fingerprint: string | null }, b: { fingerprint: string | null }) => String(a.fingerprint).localeCompare(String(b.fingerprint));
    expect(shown.map(({ tags: _tags, ...f }) => f).sort(byFingerprint)).toEqual(expectedFindings(scan).sort(byFingerprint));
    const statuses = shown.map((f) => f.status);
    expect(statuses).toEqual([...statuses].sort((a, b) => (a === 'new' ? 0 : 1) - (b === 'new' ? 0 : 1)));
    expect(statuses).toEqual(expect.arrayContaining(['new', 'existing']));
    for (const f of shown) expect(f.tags).toEqual(expect.arrayContaining([f.status, ...(f.suppressed ? ['suppressed'] : [])]));
    // The seed's two suppressions apply: one by rule id, one by fingerprint; the fix of 2.4.1's debuggable is listed.
    expect(new Set(scan.findings.flatMap((f) => (f.suppressed ? [f.suppressed.id] : [])))).toEqual(new Set([data.baselines.expiring, data.baselines.sms]));
    expect(await shownRefs(s.page, 'fixed')).toEqual(scan.fixedFindings.map((r) => ({ id: r.id, fingerprint: r.fingerprint })));
    expect(scan.fixedFindings.map((r) => r.id)).toContain('android.debuggable');
    expect(await s.page.$('[data-refs=unsuppressed]')).toBeNull();
    await screenshot(s.page, 'console-build-compared');
    // The baseline opens.
    await s.page.click('[data-field=baseline-build]');
    await s.page.waitForSelector(`[data-panel=finding] [data-baseline=""]`);
    expect(s.page.url()).toContain(`build=${data.builds.risky}`);
    await clean(s);
  });

  it('the build after a suppression expired lists its findings as back, counted as open again', async () => {
    const scan = await comparedScan(data.baselines.back);
    expect(scan.unsuppressed.map((r) => r.id)).toEqual(['android.allow-backup']);
    const s = await open(support, route('builds', { build: data.baselines.back }));
    await openScan(s, scan);
    expect(await shownRefs(s.page, 'unsuppressed')).toEqual(scan.unsuppressed.map((r) => ({ id: r.id, fingerprint: r.fingerprint })));
    const shown = await shownFindings(s.page);
    const back = shown.find((f) => f.fingerprint === scan.unsuppressed[0].fingerprint)!;
    expect(back).toMatchObject({ suppressed: null, status: 'existing' });
    expect(back.tags).toContain('back');
    const suppressed = scan.findings.filter((f) => f.suppressed).length;
    expect(await shownDiff(s.page)).toEqual({ ...scan.diff, open: scan.findings.length - suppressed, suppressed });
    await screenshot(s.page, 'console-build-back');
    await clean(s);
  });

  it('a scan stored before fingerprints existed says "not compared"', async () => {
    const { build } = await gql<{ build: { scans: Array<{ id: string; engine: string }> } }>(admin, 'query($id: ID!) { build(id: $id) { scans { id engine } } }', { id: data.builds.clean });
    const id = build.scans.find((x) => x.engine === 'static')!.id;
    // The shape an earlier release stored: no comparison, findings without fingerprint or status.
    const scans = h.deps.db.collection<{ _id: string; findings: Array<Record<string, unknown>> }>('scans');
    const doc = (await scans.findOne({ _id: id }))!;
    const findings = doc.findings.map(({ fingerprint: _f, status: _s, suppressed: _x, ...rest }) => rest);
    await scans.updateOne({ _id: id }, { $set: { findings }, $unset: { diff: '', baseline: '', fixedFindings: '', unsuppressed: '', buildCreatedAt: '' } });
    expect((await gql<{ scan: ApiComparedScan }>(admin, COMPARED_SCAN, { id })).scan.diff).toBeNull();
    const s = await open(support, route('builds', { build: data.builds.clean }));
    await s.page.waitForSelector(`[data-scan="${id}"] [data-compared=no]`);
    expect(await s.page.textContent('[data-compared=no]')).toContain('not compared');
    expect(await s.page.$('[data-diff]')).toBeNull();
    await clean(s);
  });

  it('suppressions: each row as the API lists it, expired ones marked, read only for support', async () => {
    const list = (await gql<{ app: { suppressions: { totalCount: number; nodes: ApiSuppression[] } } }>(admin, SUPPRESSIONS, { id: data.appId })).app.suppressions;
    expect(new Set(list.nodes.map((x) => x.status))).toEqual(new Set(['active', 'expired']));
    const s = await open(support, route('suppressions'));
    await s.page.waitForSelector('[data-table=suppressions]');
    const rows = await shownSuppressions(s.page);
    expect(rows).toEqual(
      list.nodes.map((x) => ({
        id: x.id, findingId: x.findingId, fingerprint: x.fingerprint, fingerprintTitle: x.fingerprint, reason: x.reason, createdBy: x.createdBy,
        createdAt: x.createdAt, expiresAt: x.expiresAt, expiredMark: x.status === 'expired', status: x.status,
      })),
    );
    expect(await s.page.textContent('[data-panel=suppressions] [data-field=total]')).toBe(String(list.totalCount));
    expect(await s.page.$$('[data-table=suppressions] button')).toHaveLength(0);
    await screenshot(s.page, 'console-suppressions');
    await clean(s);
  });

  it('suppressions: an admin deletes one after confirming, and the API lists it no more', async () => {
    const s = await open(admin, route('suppressions'));
    const row = `tr[data-suppression="${data.baselines.sms}"]`;
    await s.page.click(`${row} button`);
    await s.page.waitForSelector('dialog[open]');
    expect(await s.page.textContent('dialog[open]')).toContain(data.baselines.sms);
    await s.page.click('dialog[open] [data-confirm]');
    await s.page.waitForSelector('.notice');
    await s.page.waitForSelector(row, { state: 'detached' });
    const list = (await gql<{ app: { suppressions: { nodes: ApiSuppression[] } } }>(admin, SUPPRESSIONS, { id: data.appId })).app.suppressions.nodes;
    expect(list.map((x) => x.id)).not.toContain(data.baselines.sms);
    expect((await shownSuppressions(s.page)).map((x) => x.id)).toEqual(list.map((x) => x.id));
    await clean(s);
  });

  it('suppressions: "Load more" appends the next page, every suppression once in the API\'s order', async () => {
    const team = await h.newKey(data.appId, ['rules:write']);
    const expiresAt = new Date(h.clock.now().getTime() + 30 * DAY).toISOString();
    for (let i = 0; i < 25; i++) {
      const res = await h.api(`/v1/apps/${data.appId}/suppressions`, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(team.key) }, body: JSON.stringify({ findingId: 'android.task-affinity', reason: `Accepted for the pilot ${i}`, expiresAt }) });
      expect(res.status).toBe(201);
      h.clock.advance(1_000);
    }
    const list = (await gql<{ app: { suppressions: { totalCount: number; nodes: ApiSuppression[] } } }>(admin, SUPPRESSIONS, { id: data.appId })).app.suppressions;
    expect(list.totalCount).toBeGreaterThan(25);
    const s = await open(support, route('suppressions'));
    await s.page.waitForSelector('[data-table=suppressions]');
    expect((await shownSuppressions(s.page)).map((x) => x.id)).toEqual(list.nodes.slice(0, 25).map((x) => x.id));
    await s.page.click('[data-panel=suppressions] [data-more]');
    await s.page.waitForSelector('[data-panel=suppressions] [data-more]', { state: 'detached' });
    expect((await shownSuppressions(s.page)).map((x) => x.id)).toEqual(list.nodes.map((x) => x.id));
    expect(await s.page.textContent('[data-panel=suppressions] [data-field=shown]')).toBe(String(list.totalCount));
    await clean(s);
  });
});
