// Protects: the console's and the explorer's hashed assets are sent in the best content coding the request accepts
// of those the build wrote (Brotli, then gzip, by the request's q-values), each decoding to exactly the bytes built;
// as built when the request accepts neither or says nothing; with Vary: Accept-Encoding on every asset answer, and
// the page's policy and immutable caching on compressed answers too.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import { startHarness, type Harness } from '../support/harness';
import { CONSOLE_CSP, CONSOLE_DIST, EXPLORER_CSP } from '../../src/http/console';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h.close());

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A GET whose body is kept as sent (fetch would decode it). */
function get(urlPath: string, acceptEncoding?: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${h.baseUrl}${urlPath}`, { headers: acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

const pages = [
  { page: '/console', dir: CONSOLE_DIST, policy: CONSOLE_CSP },
  { page: '/console/explorer', dir: path.join(CONSOLE_DIST, 'explorer'), policy: EXPLORER_CSP },
];

/** The page's script as the build wrote it: its URL and bytes. */
function script(dir: string): { url: string; bytes: Buffer } {
  const html = fs.readFileSync(path.join(dir, 'index.html'), 'utf8');
  const url = /src="(\/console\/[^"]*assets\/([^"/]+\.js))"/.exec(html)!;
  return { url: url[1], bytes: fs.readFileSync(path.join(dir, 'assets', url[2])) };
}

const decode = (coding: string | undefined, body: Buffer): Buffer =>
  coding === 'br' ? zlib.brotliDecompressSync(body) : coding === 'gzip' ? zlib.gunzipSync(body) : body;

describe.each(pages)('$page', ({ dir, policy }) => {
  it.each([
    ['gzip, deflate, br, zstd', 'br'], // what Chromium sends
    ['br', 'br'],
    ['gzip, deflate', 'gzip'],
    ['br;q=0, gzip', 'gzip'],
    ['gzip;q=1, br;q=0.5', 'gzip'],
    ['gzip;q=0.5, br;q=1', 'br'],
    ['*', 'br'],
    ['br;q=0.5, identity', undefined],
    ['identity', undefined],
    ['zstd, deflate', undefined],
    [undefined, undefined],
  ])('Accept-Encoding %p gets %p, decoding to the script as built', async (accept, coding) => {
    const { url, bytes } = script(dir);
    const res = await get(url, accept);
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBe(coding);
    expect(res.headers.vary).toMatch(/\bAccept-Encoding\b/i);
    expect(res.headers['content-type']).toMatch(/^text\/javascript/);
    expect(res.headers['content-security-policy']).toBe(policy);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(Number(res.headers['content-length'])).toBe(res.body.length);
    if (coding) expect(res.body.length).toBeLessThan(bytes.length);
    expect(decode(coding, res.body).equals(bytes)).toBe(true);
  });

  it('sends every compressed copy the build wrote as the asset it was made from', async () => {
    const copies = fs.readdirSync(path.join(dir, 'compressed'));
    expect(copies.length).toBeGreaterThan(0);
    const prefix = dir === CONSOLE_DIST ? '/console/assets' : '/console/explorer/assets';
    const wrong: string[] = [];
    for (const copy of copies) {
      const [, name, suffix] = /^(.+)\.(br|gz)$/.exec(copy)!;
      const coding = suffix === 'br' ? 'br' : 'gzip';
      const res = await get(`${prefix}/${name}`, coding);
      const built = fs.readFileSync(path.join(dir, 'assets', name));
      if (res.headers['content-encoding'] !== coding || !decode(coding, res.body).equals(built)) wrong.push(copy);
    }
    expect(wrong).toEqual([]);
  });
});
