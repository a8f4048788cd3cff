import fs from 'node:fs';
import path from 'node:path';
import { Router, type Response } from 'express';
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

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8', // source maps: name-HASH.js.map
  '.svg': 'image/svg+xml',
  '.woff2': 'font/woff2',
};

/** Asset names as esbuild writes them: name-HASH.ext (the hash changes with the content, so they never go stale). */
const ASSET_NAME = /^[A-Za-z0-9_-]+-[A-Z0-9]{8}\.(js|css|svg|woff2)(\.map)?$/;

interface Built {
  index: Buffer;
  assets: Map<string, Buffer>;
}

/** Read once at start: the bundle is a few hundred kilobytes and never changes while the process runs. */
function load(dir: string): Built | null {
  const indexFile = path.join(dir, 'index.html');
  if (!fs.existsSync(indexFile)) return null;
  const assets = new Map<string, Buffer>();
  const assetDir = path.join(dir, 'assets');
  for (const name of fs.existsSync(assetDir) ? fs.readdirSync(assetDir) : []) {
    if (ASSET_NAME.test(name)) assets.set(name, fs.readFileSync(path.join(assetDir, name)));
  }
  return { index: fs.readFileSync(indexFile), assets };
}

function secure(res: Response): void {
  res.setHeader('Content-Security-Policy', CONSOLE_CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
  res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
}

const NOT_BUILT = `<!doctype html><meta charset="utf-8"><title>shieldgate console</title>
<p>The console is not built. Run <code>npm run build:console</code> (part of <code>npm run build</code>) and restart.</p>`;

/**
 * /console: the staff console, a static page talking to /graphql with the staff token typed in. The page is never
 * cached (a new deployment is picked up at once); its hashed assets are cached for good. Mounted at /console (so no
 * other request enters it): its paths are the mount's.
 */
export function createConsoleRouter(dir: string = CONSOLE_DIST): Router {
  const built = load(dir);
  const router = Router();
  router.get('/', (_req, res) => {
    secure(res);
    res.setHeader('Cache-Control', 'no-store');
    if (!built) return res.status(503).type('html').send(NOT_BUILT);
    res.status(200).type('html').send(built.index);
  });
  router.get('/assets/:name', (req, res) => {
    secure(res);
    const name = req.params.name;
    const body = built?.assets.get(name);
    if (!body) {
      res.setHeader('Cache-Control', 'no-store');
      return res.status(404).type('text/plain').send('Not found.');
    }
    res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
    res.status(200).type(TYPES[path.extname(name)] ?? 'application/octet-stream').send(body);
  });
  return router;
}
