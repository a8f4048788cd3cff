/**
 * Builds the client's release: dist/release/shieldgate-ci-<version>.tgz (made by `npm pack`) and its .sha256 in the
 * form `sha256sum -c` reads. The package bundles its runtime dependencies, so installing the tarball asks no
 * registry for anything: a CI job that checks the digest runs exactly the code this project released, whoever holds
 * the name `shieldgate-ci` on a public registry.
 *
 * The tarball is packed from a staging folder rather than from client/ itself: in the workspace its dependencies are
 * hoisted to the root node_modules, where `npm pack` would not find them to bundle. npm pack writes every entry with
 * the same fixed time, so the same sources give the same bytes.
 *
 * Usage: npm run pack:client [-- --out DIR]   (prints the tarball's path and SHA-256)
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const CLIENT = path.resolve(__dirname, '..');
const ROOT = path.resolve(CLIENT, '..');

interface Manifest {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
  bundleDependencies?: string[];
  files?: string[];
  scripts?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

const readManifest = (dir: string): Manifest => JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));

/** The folder Node resolves `name` to from `fromDir` (its package.json's folder). */
function packageDir(name: string, fromDir: string): string {
  return path.dirname(require.resolve(`${name}/package.json`, { paths: [fromDir] }));
}

/**
 * Copies the runtime dependencies' closure flat into staging/node_modules. Two versions of one name would need the
 * nested layout npm builds; the client has none, and a new dependency that brings one fails the release loudly.
 */
function copyDependencies(staging: string): string[] {
  const copied = new Map<string, string>();
  const queue: Array<[string, string]> = Object.keys(readManifest(CLIENT).dependencies ?? {}).map((name) => [name, CLIENT]);
  while (queue.length) {
    const [name, from] = queue.shift()!;
    const dir = packageDir(name, from);
    const seen = copied.get(name);
    if (seen === dir) continue;
    if (seen) throw new Error(`two copies of ${name} (${seen} and ${dir}): the flat bundle cannot hold both`);
    copied.set(name, dir);
    // Only the package's own files: a nested node_modules is resolved through the queue like any other.
    fs.cpSync(dir, path.join(staging, 'node_modules', name), { recursive: true, filter: (src) => !src.slice(dir.length).split(path.sep).includes('node_modules') });
    for (const dep of Object.keys(readManifest(dir).dependencies ?? {})) queue.push([dep, dir]);
  }
  return [...copied.keys()].sort();
}

/** A file of client/dist left from a source since removed is not released: only what client/src compiles to. */
function compiledFromSource(file: string): boolean {
  const rel = path.relative(path.join(CLIENT, 'dist'), file);
  if (rel.startsWith('..') || fs.statSync(file).isDirectory()) return true;
  return fs.existsSync(path.join(CLIENT, 'src', rel.replace(/(\.d\.ts|\.js)$/, '.ts')));
}

export interface Release {
  tarball: string;
  sha256: string;
  version: string;
}

/** Compiles client/src, packs the release into `outDir` and writes its .sha256 beside it. */
export function packRelease(outDir = path.join(ROOT, 'dist', 'release')): Release {
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc', { paths: [ROOT] }), '-p', path.join(CLIENT, 'tsconfig.json')], { stdio: 'inherit' });
  const staging = fs.mkdtempSync(path.join(os.tmpdir(), 'shieldgate-ci-pack-'));
  try {
    const manifest = readManifest(CLIENT);
    for (const entry of [...(manifest.files ?? []), 'README.md']) fs.cpSync(path.join(CLIENT, entry), path.join(staging, entry), { recursive: true, filter: (src) => compiledFromSource(src) });
    const bundled = copyDependencies(staging);
    // The installed package needs neither the workspace's build script nor anything to fetch.
    const { scripts: _scripts, devDependencies: _dev, ...rest } = manifest;
    fs.writeFileSync(path.join(staging, 'package.json'), JSON.stringify({ ...rest, bundleDependencies: bundled }, null, 2) + '\n');
    fs.mkdirSync(outDir, { recursive: true });
    const [packed] = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', outDir], { cwd: staging, env: { ...process.env, npm_config_ignore_scripts: 'true' } }).toString()) as Array<{ filename: string }>;
    const tarball = path.join(outDir, packed.filename);
    const sha256 = createHash('sha256').update(fs.readFileSync(tarball)).digest('hex');
    // Two spaces: the layout sha256sum writes and `sha256sum -c` expects.
    fs.writeFileSync(`${tarball}.sha256`, `${sha256}  ${packed.filename}\n`);
    return { tarball, sha256, version: manifest.version };
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

if (require.main === module) {
  const at = process.argv.indexOf('--out');
  const release = packRelease(at > 0 ? path.resolve(process.argv[at + 1]) : undefined);
  process.stdout.write(`${release.tarball}\nsha256 ${release.sha256}\n`);
}
