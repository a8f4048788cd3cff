/**
 * The bundled GraphQL explorer (GraphiQL at /console/explorer) in a real browser against the real service: sign-in
 * with a staff token, a query typed and run, the answer shown; every request the page and its workers make goes to
 * the service's origin; nothing is refused by its Content-Security-Policy. And Apollo Sandbox at /graphql with
 * Apollo's CDN unreachable (aborted by the test, so the outcome does not depend on the machine's network) says so
 * and links to the explorer.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startHarness, type Harness } from '../support/harness';
import { CONSOLE_DIST, EXPLORER_CSP } from '../../src/http/console';
import { SANDBOX_FRAME_ORIGIN, SANDBOX_SCRIPT_ORIGIN } from '../../src/graphql/sandbox-page';
import { launchChromium, screenshot, watchProblems } from './browser';

let h: Harness;
let browser: Browser;
let support: string;
let appId: string;

beforeAll(async () => {
  if (!fs.existsSync(path.join(CONSOLE_DIST, 'explorer', 'index.html'))) throw new Error('dist/console/explorer is missing: npm run build:console (npm test builds it)');
  h = await startHarness();
  support = await h.newStaff('support');
  ({ appId } = await h.newApp('startup'));
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

/** Every URL any page or worker of the context asks for, in order. */
function recordRequests(context: BrowserContext): string[] {
  const urls: string[] = [];
  context.on('request', (request) => urls.push(request.url()));
  return urls;
}

/** Every asset the service refused (a lazily loaded chunk that 404s fails quietly inside GraphiQL). */
function recordMissing(context: BrowserContext): string[] {
  const missing: string[] = [];
  context.on('response', (res) => {
    if (res.status() >= 400 && !res.url().endsWith('/graphql')) missing.push(`${res.status()} ${res.url()}`);
  });
  return missing;
}

/** The text of a Monaco editor as drawn (Monaco draws spaces as no-break spaces). */
const editorText = (page: Page, selector: string) => page.$eval(selector, (el) => (el.textContent ?? '').replace(/\u00a0/g, ' '));

it('serves the page and its assets under a policy as strict as the console’s, with workers from this origin', async () => {
  expect(EXPLORER_CSP).toBe(
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; font-src data:; worker-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  );
  const res = await h.api('/console/explorer');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-security-policy')).toBe(EXPLORER_CSP);
  expect(res.headers.get('x-frame-options')).toBe('DENY');
  expect(res.headers.get('cache-control')).toBe('no-store');
  const html = await res.text();
  expect(html).not.toMatch(/https?:\/\//);
  expect(html).not.toMatch(/<script(?![^>]*\ssrc=)/); // no inline script
  const assets = [...html.matchAll(/(?:src|href)="(\/console\/explorer\/assets\/[^"]+)"/g)].map((m) => m[1]);
  expect(assets).toHaveLength(2);
  for (const asset of assets) {
    const a = await h.api(asset);
    expect(a.status).toBe(200);
    expect(a.headers.get('content-security-policy')).toBe(EXPLORER_CSP);
    expect(a.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
  }
  // Every file the build wrote is served, lazily loaded chunks (Monaco's modes, Prettier) and workers included.
  const built = fs.readdirSync(path.join(CONSOLE_DIST, 'explorer', 'assets'));
  const refused: string[] = [];
  for (const name of built) if ((await h.api(`/console/explorer/assets/${name}`)).status !== 200) refused.push(name);
  expect(refused).toEqual([]);
});

it('signs in with a staff token, runs a typed query and shows the answer, talking to this origin only', async () => {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const requests = recordRequests(context);
  const missing = recordMissing(context);
  const page = await context.newPage();
  const problems = await watchProblems(page);
  await page.goto(`${h.baseUrl}/console/explorer`);
  await page.fill('[data-control=token]', support);
  await page.click('button[type=submit]');
  await page.waitForSelector('.graphiql-container');
  expect(await page.textContent('[data-role]')).toContain('support');

  // A document no console screen sends: staff may run any operation here.
  const query = `query ExplorerCheck { app(id: "${appId}") { id plan } }`;
  await page.waitForSelector('.graphiql-query-editor .monaco-editor');
  await page.click('.graphiql-query-editor .view-lines');
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(query);
  // The variables editor too: Monaco's JSON mode and its worker load when it opens.
  await page.click('text=Variables');
  await page.waitForSelector('.graphiql-editor-tool .monaco-editor');
  // GraphiQL reads the operation from the editor a moment after the edit; its tab takes the operation's name then.
  await page.waitForSelector('#graphiql-session-tab-0[title=ExplorerCheck]');
  const answered = page.waitForResponse((res) => res.url() === `${h.baseUrl}/graphql` && (res.request().postData() ?? '').includes(appId));
  await page.click('.graphiql-execute-button');
  const answer = await answered;
  const sent = JSON.parse(answer.request().postData() ?? '{}') as { query: string };
  expect(sent.query).toBe(query);
  expect(answer.request().headers().authorization).toBe(`Bearer ${support}`);
  expect(await answer.json()).toEqual({ data: { app: { id: appId, plan: 'startup' } } });
  await page.waitForFunction(`(document.querySelector('.graphiql-response')?.textContent ?? '').includes(${JSON.stringify(appId)})`);
  const shown = await editorText(page, '.graphiql-response');
  expect(shown).toContain(`"id": "${appId}"`);
  expect(shown).toContain('"plan": "startup"');
  await screenshot(page, 'explorer');

  // The schema came from this service (GraphiQL's introspection), and so did every script, style and worker.
  expect(requests.filter((url) => url === `${h.baseUrl}/graphql`).length).toBeGreaterThanOrEqual(3);
  expect(requests.some((url) => /\/console\/explorer\/assets\/(editor|graphql)-worker-[A-Z0-9]{8}\.js$/.test(url))).toBe(true);
  expect(requests.filter((url) => !url.startsWith('data:') && new URL(url).origin !== h.baseUrl)).toEqual([]);
  expect(requests.some((url) => /\/console\/explorer\/assets\/json-worker-[A-Z0-9]{8}\.js$/.test(url))).toBe(true);
  expect(missing).toEqual([]);
  // The token is nowhere the page keeps things, nor in the URL.
  expect(await page.evaluate('JSON.stringify(localStorage) + JSON.stringify(sessionStorage) + document.cookie + location.href')).not.toContain(support.slice(4));
  expect(await problems.violations()).toEqual([]);
  expect(problems.errors).toEqual([]);
  await context.close();
});

it('shows why a token is refused and stays on the sign-in', async () => {
  const context = await browser.newContext();
  const requests = recordRequests(context);
  const page = await context.newPage();
  await page.goto(`${h.baseUrl}/console/explorer`);
  await page.fill('[data-control=token]', `${support}x`);
  await page.click('button[type=submit]');
  await page.waitForSelector('[role=alert]');
  expect(await page.textContent('[role=alert]')).toMatch(/did not accept this token/);
  expect(await page.$('.graphiql-container')).toBeNull();
  expect(requests.filter((url) => new URL(url).origin !== h.baseUrl)).toEqual([]);
  await context.close();
});

it('at /graphql with Apollo’s CDN unreachable, says so and links to the bundled explorer, which works', async () => {
  const context = await browser.newContext();
  for (const origin of [SANDBOX_SCRIPT_ORIGIN, SANDBOX_FRAME_ORIGIN]) await context.route(`${origin}/**`, (route) => route.abort('internetdisconnected'));
  const page = await context.newPage();
  const res = await page.goto(`${h.baseUrl}/graphql`);
  expect(res?.status()).toBe(200);
  await page.waitForSelector('#shieldgate-offline', { state: 'visible' });
  expect(await page.textContent('#shieldgate-offline')).toContain('embeddable-sandbox.cdn.apollographql.com');
  await screenshot(page, 'sandbox-offline');
  await Promise.all([page.waitForURL(`${h.baseUrl}/console/explorer`), page.click('[data-explorer-link]')]);
  await page.fill('[data-control=token]', support);
  await page.click('button[type=submit]');
  await page.waitForSelector('.graphiql-container');
  await context.close();
});
