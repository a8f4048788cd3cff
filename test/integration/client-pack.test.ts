// The client's release as a CI job gets it: `npm run pack:client` makes the tarball and its .sha256; `tar` lists
// what it holds (the compiled client and its bundled dependencies, no tests, no TypeScript sources, nothing
// secret-looking); `sha256sum -c` checks it as the docs tell a job to; npm installs it offline with an empty cache
// (so no registry could have answered) and the installed command reports the client's version.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { packRelease, type Release } from '../../client/scripts/pack-release';

const CLIENT = path.join(__dirname, '..', '..', 'client');
let out: string;
let release: Release;
let entries: string[];

beforeAll(() => {
  out = fs.mkdtempSync(path.join(os.tmpdir(), 'shieldgate-ci-release-'));
  release = packRelease(out);
  entries = execFileSync('tar', ['-tzf', release.tarball]).toString().trim().split('\n').sort();
}, 120_000);

afterAll(() => fs.rmSync(out, { recursive: true, force: true }));

const manifest = () => JSON.parse(fs.readFileSync(path.join(CLIENT, 'package.json'), 'utf8'));

it('is named after the client and its version', () => {
  expect(path.basename(release.tarball)).toBe(`shieldgate-ci-${manifest().version}.tgz`);
});

it('holds the compiled client, its command and its bundled dependencies, and nothing else', () => {
  const own = entries.filter((e) => !e.startsWith('package/node_modules/'));
  const compiled = (e: string) => /^package\/dist\/[\w/-]+\.(js|d\.ts)$/.test(e);
  expect(own.filter((e) => !compiled(e))).toEqual(['README.md', 'bin/shieldgate-ci.js', 'package.json'].map((f) => `package/${f}`));
  // Each compiled file comes from a source of client/src (a left-over of a removed source is not shipped).
  for (const e of own.filter(compiled)) {
    expect(fs.existsSync(path.join(CLIENT, 'src', e.replace(/^package\/dist\//, '').replace(/(\.d\.ts|\.js)$/, '.ts')))).toBe(true);
  }
  expect(own).toContain('package/dist/cli.js');
  // Bundled: exactly the runtime dependencies' closure, as the packed package.json declares it.
  const packed = JSON.parse(execFileSync('tar', ['-xzOf', release.tarball, 'package/package.json']).toString());
  const bundledDirs = new Set(entries.filter((e) => e.startsWith('package/node_modules/')).map((e) => e.split('/').slice(2, 3).join('/')));
  expect([...bundledDirs].sort()).toEqual([...packed.bundleDependencies].sort());
  for (const dep of Object.keys(manifest().dependencies ?? {})) expect(packed.bundleDependencies).toContain(dep);
  expect(packed.scripts).toBeUndefined();
});

it('ships no tests, TypeScript sources or secret-looking files', () => {
  const forbidden = entries.filter(
    (e) => /\.test\.|\/test\/|\/__tests__\//.test(e) || (/\.ts$/.test(e) && !/\.d\.ts$/.test(e)) || /(^|\/)\.env|\.pem$|\.key$|\.p12$|\.npmrc$/.test(e),
  );
  expect(forbidden).toEqual([]);
  const listing = execFileSync('tar', ['-xzOf', release.tarball]).toString('latin1');
  // Key and token prefixes the service issues, and private keys.
  expect(listing).not.toMatch(/svc_(live|test)_[A-Za-z0-9]{8}|stf_[A-Za-z0-9]{8}|BEGIN [A-Z ]*PRIVATE KEY/);
});

it('matches its .sha256 as sha256sum -c checks it', () => {
  const check = execFileSync('sha256sum', ['-c', `${path.basename(release.tarball)}.sha256`], { cwd: out }).toString();
  expect(check.trim()).toBe(`${path.basename(release.tarball)}: OK`);
  expect(execFileSync('sha256sum', [release.tarball]).toString().split(' ')[0]).toBe(release.sha256);
});

it('is the same bytes when packed again from the same sources', () => {
  const again = packRelease(fs.mkdtempSync(path.join(out, 'again-')));
  expect(again.sha256).toBe(release.sha256);
}, 120_000);

it('installs offline with an empty cache and runs shieldgate-ci --version', () => {
  const project = fs.mkdtempSync(path.join(out, 'project-'));
  const cache = fs.mkdtempSync(path.join(out, 'cache-'));
  const tgz = path.join(project, path.basename(release.tarball));
  fs.copyFileSync(release.tarball, tgz);
  const env = { ...process.env, npm_config_cache: cache, npm_config_registry: 'http://127.0.0.1:9/', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
  execFileSync('npm', ['install', '--offline', '--no-save', `./${path.basename(tgz)}`], { cwd: project, env, stdio: 'pipe' });
  const version = execFileSync(path.join(project, 'node_modules', '.bin', 'shieldgate-ci'), ['--version'], { cwd: project }).toString().trim();
  expect(version).toBe(manifest().version);
  // `npx --no --` runs the installed command and never fetches one (without `--`, npx takes --version as its own).
  expect(execFileSync('npx', ['--no', '--', 'shieldgate-ci', '--version'], { cwd: project, env }).toString().trim()).toBe(manifest().version);
}, 120_000);
