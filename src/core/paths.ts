import fs from 'node:fs';
import path from 'node:path';

/** The checkout's root (the folder with package.json), from source (tsx, jest) and from dist/ alike. */
function findRoot(start: string): string {
  let dir = start;
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`package.json not found above ${start}`);
    dir = parent;
  }
  return dir;
}

export const REPO_ROOT = findRoot(__dirname);
export const SCHEMA_DIR = path.join(REPO_ROOT, 'schema');
export const OPENAPI_FILE = path.join(REPO_ROOT, 'openapi', 'v1.yaml');
