// Protects: the console's copy names only scopes the service knows (src/auth/scopes.ts): a page telling staff to
// make a key with a scope that does not exist sends them to a refusal.
import fs from 'node:fs';
import path from 'node:path';
import { SCOPES } from '../../src/auth/scopes';

const CONSOLE_SRC = path.join(__dirname, '..', '..', 'console', 'src');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return /\.tsx?$/.test(entry.name) ? [full] : [];
  });
}

/**
 * Scope-looking words: `resource:verb` where the resource or the verb is one of a real scope's (so `threats:write`
 * and `builds:delete` are caught, while `build:console` or a CSS `a:hover` are not).
 */
const resources = new Set(SCOPES.map((scope) => scope.split(':')[0]));
const verbs = new Set(SCOPES.map((scope) => scope.split(':')[1]));
function scopeLooking(text: string): string[] {
  return [...text.matchAll(/\b([a-z]+):([a-z]+)\b/g)].filter((m) => resources.has(m[1]) || verbs.has(m[2])).map((m) => m[0]);
}

describe('scopes named by the console', () => {
  const found = sources(CONSOLE_SRC).flatMap((file) => scopeLooking(fs.readFileSync(file, 'utf8')).map((scope) => ({ file: path.relative(CONSOLE_SRC, file), scope })));

  it('finds the scopes the copy names', () => {
    expect(found.length).toBeGreaterThan(0);
  });

  it('names only scopes of src/auth/scopes.ts', () => {
    expect(found.filter(({ scope }) => !(SCOPES as readonly string[]).includes(scope))).toEqual([]);
  });

  it('would catch a scope that does not exist', () => {
    expect(scopeLooking('a key holding threats:write, builds:delete; a:hover build:console')).toEqual(['threats:write', 'builds:delete']);
  });
});
