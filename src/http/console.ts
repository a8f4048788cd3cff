import fs from 'node:fs';
import path from 'node:path';
import { Router, type Request, type Response } from 'express';
import Negotiator from 'negotiator';
import { REPO_ROOT } from '../core/paths';

/** Where `npm run build:console` writes index.html and assets/ (console/build.ts). */
export const CONSOLE_DIST = path.join(REPO_ROOT, 'dist', 'console');

/**
 * Everything the page may load comes from this origin; nothing may frame it, and it submits no forms. The staff
 * token lives in the page's memory, so a script injected from anywhere else is what this policy exists to stop.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The explorer's policy: the console's, plus what GraphiQL's editor (Monaco) needs: its web workers from this
 * origin, its icon font (a data: URL in GraphiQL's stylesheet), and inline styles: Monaco positions every line it
 * draws with a style attribute and writes its theme and icon rules into style elements, with no way to give them a
 * nonce. Scripts stay this origin's only, and with images, fonts and connections held to this origin (and data:),
 * a style cannot send anything anywhere.
 */
export const EXPLORER_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self'",
  "img-src 'self' data:",
  'font-src data:',
  "worker-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8', // source maps: name-HASH.js.map
  '.svg': 'image/svg+xml',
  '.woff2': 'font/woff2',
};

/**
 * Asset names as esbuild writes them: name-HASH.ext (the hash changes with the content, so they never go stale). A
 * chunk's name is its module's file name, which may hold dots (Monaco's monaco.contribution.js).
 */
const ASSET_NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*-[A-Z0-9]{8}\.(js|css|svg|woff2)(\.map)?$/;

/** The content codings a browser may get an asset in, best first, each read from compressed/NAME.<suffix>. */
const CODINGS = [
  { coding: 'br', suffix: 'br' },
  { coding: 'gzip', suffix: 'gz' },
] as const;
type Coding = (typeof CODINGS)[number]['coding'];

interface Built {
  index: Buffer;
  assets: Map<string, Buffer>;
  /** The copies console/compress.ts wrote at build time, by asset name; an asset none was worth writing for is absent. */
  encoded: Map<string, Map<Coding, Buffer>>;
}

/** Read once at start: the bundle never changes while the process runs. */
function load(dir: string): Built | null {
  const indexFile = path.join(dir, 'index.html');
  if (!fs.existsSync(indexFile)) return null;
  const assets = new Map<string, Buffer>();
  const encoded = new Map<string, Map<Coding, Buffer>>();
  const assetDir = path.join(dir, 'assets');
  for (const name of fs.existsSync(assetDir) ? fs.readdirSync(assetDir) : []) {
    if (!ASSET_NAME.test(name)) continue;
    assets.set(name, fs.readFileSync(path.join(assetDir, name)));
    for (const { coding, suffix } of CODINGS) {
      const file = path.join(dir, 'compressed', `${name}.${suffix}`);
      if (!fs.existsSync(file)) continue;
      if (!encoded.has(name)) encoded.set(name, new Map());
      encoded.get(name)!.set(coding, fs.readFileSync(file));
    }
  }
  return { index: fs.readFileSync(indexFile), assets, encoded };
}

function secure(res: Response, policy: string): void {
  res.setHeader('Content-Security-Policy', policy);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
  res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
}

const notBuilt = (title: string) => `<!doctype html><meta charset="utf-8"><title>${title}</title>
<p>The console is not built. Run <code>npm run build:console</code> (part of <code>npm run build</code>) and restart.</p>`;

/**
 * The coding to send an asset in: of the copies built, the one the request's Accept-Encoding gives the highest q-value,
 * Brotli before gzip on a tie (RFC 9110 gives the header's order no meaning, and browsers list gzip first), unless
 * the asset as built (identity) ranks higher. Without the header, the asset as built, as servers do by convention.
 * Express's own req.acceptsEncodings breaks ties by the header's order, hence negotiator with `preferred`.
 */
function best(req: Request, copies: Map<Coding, Buffer> | undefined): Coding | null {
  if (!copies) return null;
  const ranked = new Negotiator(req).encodings([...copies.keys(), 'identity'], { preferred: CODINGS.map((c) => c.coding) });
  const first = ranked[0];
  return first && first !== 'identity' ? (first as Coding) : null;
}

/**
 * A page and its name-HASH assets: never cached itself (a new deployment is picked up at once), its assets for good,
 * each in the best coding the request accepts of those built (Brotli, gzip), else as built. The explorer's first
 * load is 1.68 MiB as built and 0.61 MiB in Brotli.
 */
function serve(router: Router, at: string, built: Built | null, policy: string, title: string, index?: Buffer): void {
  router.get(at || '/', (_req, res) => {
    secure(res, policy);
    res.setHeader('Cache-Control', 'no-store');
    if (!built) return res.status(503).type('html').send(notBuilt(title));
    res.status(200).type('html').send(index ?? built.index);
  });
  router.get(`${at}/assets/:name`, (req, res) => {
    secure(res, policy);
    const name = req.params.name;
    const body = built?.assets.get(name);
    if (!body) {
      res.setHeader('Cache-Control', 'no-store');
      return res.status(404).type('text/plain').send('Not found.');
    }
    res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
    res.setHeader('Vary', 'Accept-Encoding');
    res.type(TYPES[path.extname(name)] ?? 'application/octet-stream');
    const copies = built!.encoded.get(name);
    const coding = best(req, copies);
    if (!coding) return res.status(200).send(body);
    res.setHeader('Content-Encoding', coding);
    res.status(200).send(copies!.get(coding));
  });
}

/**
 * /console: the staff console, a static page talking to /graphql with the staff token typed in; and, with `explorer`
 * (GRAPHQL_SANDBOX on), /console/explorer, the bundled GraphQL explorer. Where it is off, nothing of the explorer is
 * read or served (its paths meet the service's not-found answer) and the console's page does not offer it: the
 * built page marks the offer with data-explorer on its root element. Mounted at /console (so no other request
 * enters it): its paths are the mount's.
 */
export function createConsoleRouter(dir: string = CONSOLE_DIST, opts: { explorer: boolean } = { explorer: true }): Router {
  const built = load(dir);
  const router = Router();
  const index = built && !opts.explorer ? Buffer.from(built.index.toString('utf8').replace(/^<html lang="en" data-explorer>/m, '<html lang="en">')) : undefined;
  serve(router, '', built, CONSOLE_CSP, 'shieldgate console', index);
  if (opts.explorer) serve(router, '/explorer', load(path.join(dir, 'explorer')), EXPLORER_CSP, 'shieldgate GraphQL explorer');
  return router;
}
