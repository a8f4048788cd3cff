// Protects: GET / points to the console, /graphql and the OpenAPI document, each of which answers; Apollo Sandbox's
// page at /graphql runs under a CSP that allows the scripts and frame Apollo's own page loads and nothing else, with
// framing refused, and carries the notice (under the page's nonce) that links to the bundled explorer where Apollo's
// CDN cannot be reached; GRAPHQL_SANDBOX=off serves neither Sandbox nor the explorer (the service's not-found
// problem for both) and the console does not offer the explorer.
import fs from 'node:fs';
import path from 'node:path';
import { startHarness, type Harness } from '../support/harness';
import { CONSOLE_DIST } from '../../src/http/console';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h.close());

function directives(policy: string): Map<string, string[]> {
  return new Map(policy.split(';').map((part) => part.trim().split(/\s+/)).filter((words) => words[0]).map(([name, ...values]) => [name, values]));
}

it('answers GET / with links that lead somewhere', async () => {
  const res = await h.api('/');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = (await res.json()) as { service: string; links: Record<string, string> };
  expect(body.service).toBe('shieldgate');
  expect(Object.keys(body.links)).toEqual(expect.arrayContaining(['console', 'graphql', 'openapi']));
  for (const [name, link] of Object.entries(body.links)) {
    const path = new URL(link).pathname;
    const followed = await h.api(path, { headers: { accept: name === 'graphql' ? 'text/html' : '*/*' } });
    expect([name, followed.status]).toEqual([name, 200]);
  }
});

it('serves Sandbox under a policy allowing exactly what Apollo’s page loads, and no framing', async () => {
  const res = await h.api('/graphql', { headers: { accept: 'text/html' } });
  expect(res.status).toBe(200);
  const html = await res.text();
  const policy = directives(res.headers.get('content-security-policy') ?? '');
  expect(res.headers.get('x-frame-options')).toBe('DENY');
  expect(policy.get('frame-ancestors')).toEqual(["'none'"]);
  expect(policy.get('default-src')).toEqual(["'none'"]);

  // The page as Apollo renders it is the oracle: the origins of its external scripts, its nonce, and the frame
  // origins its own meta policy names.
  const scriptOrigins = [...html.matchAll(/<script[^>]*\ssrc="([^"]+)"/g)].map((m) => new URL(m[1]).origin);
  const nonces = new Set([...html.matchAll(/nonce="?([0-9a-f]{64})"?/g)].map((m) => m[1]));
  expect(nonces.size).toBe(1);
  const nonce = [...nonces][0];
  expect(policy.get('script-src')!.sort()).toEqual([`'nonce-${nonce}'`, ...new Set(scriptOrigins)].sort());
  const apolloMeta = directives(/http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)![1]);
  const frames = policy.get('frame-src')!;
  expect(frames).toEqual(['https://sandbox.embed.apollographql.com']);
  expect(apolloMeta.get('frame-src')).toEqual(expect.arrayContaining(frames));
  // GraphQL calls go to this origin only.
  expect(policy.get('connect-src')).toEqual(["'self'"]);
  // The offline notice: hidden, linking to the explorer, its script and style under the page's one nonce.
  expect(html).toMatch(/<div id="shieldgate-offline" role="alert" hidden>/);
  expect(html).toContain('href="/console/explorer"');
  const inline = [...html.matchAll(/<(script|style)(?![^>]*\ssrc=)([^>]*)>/g)];
  expect(inline.length).toBeGreaterThanOrEqual(4);
  for (const [tag] of inline) expect(tag).toMatch(new RegExp(`nonce="?${nonce}"?`));
});

it('keeps GraphQL answers free of the page policy', async () => {
  const res = await h.api('/graphql?query=%7B__typename%7D', { headers: { accept: 'application/json' } });
  expect(res.headers.get('content-security-policy')).toBeNull();
});

/** The explorer's page and one of its scripts, as the build wrote them. */
function explorerFiles(): string[] {
  const html = fs.readFileSync(path.join(CONSOLE_DIST, 'explorer', 'index.html'), 'utf8');
  return ['/console/explorer', /src="(\/console\/explorer\/assets\/[^"]+\.js)"/.exec(html)![1]];
}

async function expectNotFoundProblem(res: Response): Promise<void> {
  expect(res.status).toBe(404);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(((await res.json()) as { code: string }).code).toBe('not_found');
}

it('serves the bundled explorer and offers it in the console while GRAPHQL_SANDBOX is on', async () => {
  for (const file of explorerFiles()) expect([file, (await h.api(file)).status]).toEqual([file, 200]);
  expect(await (await h.api('/console')).text()).toContain('<html lang="en" data-explorer>');
});

it('serves neither Sandbox nor the explorer with GRAPHQL_SANDBOX=off', async () => {
  const off = await startHarness({ env: { GRAPHQL_SANDBOX: 'off' } });
  try {
    const res = await off.api('/graphql', { headers: { accept: 'text/html' } });
    expect(res.headers.get('content-security-policy')).toBeNull();
    await expectNotFoundProblem(res);
    for (const file of explorerFiles()) await expectNotFoundProblem(await off.api(file, { headers: { accept: 'text/html' } }));
    const consolePage = await off.api('/console');
    expect(consolePage.status).toBe(200);
    expect(await consolePage.text()).toContain('<html lang="en">');
    expect(((await (await off.api('/')).json()) as { sandbox: unknown }).sandbox).toBeNull();
    // GraphQL itself still answers a staff token.
    const staff = await off.newStaff('support');
    const answer = await off.api('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${staff}` }, body: '{"query":"{ __typename }"}' });
    expect(await answer.json()).toEqual({ data: { __typename: 'Query' } });
  } finally {
    await off.close();
  }
});
