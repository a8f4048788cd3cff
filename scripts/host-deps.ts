/**
 * Host dependencies, checked as written (part of `npm run check`). Tests, tools, benches and scripts run Debian's
 * tools (aapt, apksigner, gcc, ...) and read files Debian installs (/usr/share/apktool, framework-res.apk). A machine
 * set up by hand hides a missing install: this check reads every such file for
 *   - absolute host paths in string literals (/usr/..., /bin/..., /etc/..., /opt/...), and
 *   - commands: the first argument of run/execFile/spawn calls, and any literal naming a known command,
 * and fails when one is not in test/support/host-tools.ts (which names its Debian package), or when that package is
 * not installed by `.ci/run` (its apt_packages list) nor part of every Debian system. Each failure is one line naming
 * the file, the path or command and the package to add.
 *
 * `tsx scripts/host-deps.ts --list` prints what was found, one line each, for review.
 */
import fs from 'node:fs';
import path from 'node:path';
import { HOST_TOOLS, BASE_PACKAGES, NOT_DEBIAN, hostPackageOf } from '../test/support/host-tools';

const ROOT = path.resolve(__dirname, '..');
const SCANNED = ['test', 'bench', 'tools', 'scripts'];
const EXTENSIONS = new Set(['.ts', '.tsx', '.js', '.cjs', '.mjs']);

export interface HostUse { file: string; line: number; name: string }

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(full);
    else if (EXTENSIONS.has(path.extname(entry.name))) yield full;
  }
}

// A spawned command given as a literal: run('aapt', ...), runSync('zip', ...), execFileSync("unzip", ...), spawn(`redis-server`, ...).
const SPAWN = /\b(?:run|runSync|execFile|execFileSync|spawn|spawnSync|execa|runTool)\(\s*['"`]([A-Za-z0-9_.+-]+)['"`]/g;
// An absolute host path in a literal, up to the first quote or template hole.
const HOST_PATH = /['"`](\/(?:usr|bin|sbin|etc|opt|lib|lib64)\/[^'"`$\s]*)/g;
// Any other literal that names a command of the table (e.g. { cc: 'aarch64-linux-gnu-gcc' }) or looks like a cross tool.
const LITERAL = /['"`]([A-Za-z0-9_.+-]+)['"`]/g;
const CROSS_TOOL = /^[a-z0-9_]+-linux-gnu[a-z]*-[a-z0-9+.-]+$/;

/** Every host path and command that one file's text uses. */
export function hostUses(file: string, text: string): HostUse[] {
  const uses: HostUse[] = [];
  // A file that spawns nothing (no child_process, no host-tools run) may have a run() of its own.
  const spawns = /node:child_process|['"]child_process['"]|support\/host-tools/.test(text);
  const lines = text.split('\n');
  lines.forEach((lineText, i) => {
    const seen = new Set<string>();
    const add = (name: string) => {
      if (!seen.has(name)) uses.push({ file, line: i + 1, name });
      seen.add(name);
    };
    if (spawns) for (const m of lineText.matchAll(SPAWN)) add(m[1]);
    for (const m of lineText.matchAll(HOST_PATH)) add(m[1]);
    for (const m of lineText.matchAll(LITERAL)) {
      if (Object.hasOwn(HOST_TOOLS, m[1]) || CROSS_TOOL.test(m[1])) add(m[1]);
    }
  });
  return uses;
}

/** The apt packages `.ci/run` installs (its apt_packages=(...) list). */
export function ciPackages(ciRun: string): Set<string> {
  const m = /\napt_packages=\(([^)]*)\)/.exec(ciRun);
  if (!m) throw new Error('.ci/run: no apt_packages=(...) list');
  return new Set(m[1].split(/\s+/).filter(Boolean));
}

/** One line per use whose package `.ci/run` does not install, or that the table does not know. */
export function problems(uses: HostUse[], installed: Set<string>): string[] {
  const out = new Set<string>();
  for (const use of uses) {
    const where = `${path.relative(ROOT, use.file)}:${use.line}`;
    if (NOT_DEBIAN.has(use.name)) continue;
    const pkg = hostPackageOf(use.name);
    if (!pkg) {
      out.add(`${where}: '${use.name}' is not in test/support/host-tools.ts; add it with the Debian package that provides it`);
      continue;
    }
    const ciPackage = HOST_TOOLS[pkg.key].installedBy ?? pkg.debian;
    if (!BASE_PACKAGES.has(ciPackage) && !installed.has(ciPackage)) {
      out.add(`${where}: '${use.name}' comes from Debian's ${ciPackage}, which .ci/run does not install; add it to apt_packages`);
    }
  }
  return [...out];
}

export function scanRepository(): HostUse[] {
  const uses: HostUse[] = [];
  for (const dir of SCANNED) {
    for (const file of sourceFiles(path.join(ROOT, dir))) {
      // The table itself, and the test that plants unknown tools to see this check fail.
      if (file === __filename || file.endsWith(path.join('test', 'support', 'host-tools.ts')) || file.endsWith(path.join('test', 'unit', 'host-tools.test.ts'))) continue;
      uses.push(...hostUses(file, fs.readFileSync(file, 'utf8')));
    }
  }
  return uses;
}

if (require.main === module) {
  const uses = scanRepository();
  if (process.argv.includes('--list')) {
    const byName = new Map<string, string[]>();
    for (const u of uses) byName.set(u.name, [...(byName.get(u.name) ?? []), `${path.relative(ROOT, u.file)}:${u.line}`]);
    for (const [name, where] of [...byName].sort()) console.log(`${name}\t${hostPackageOf(name)?.debian ?? '?'}\t${where[0]}${where.length > 1 ? ` (+${where.length - 1})` : ''}`);
  }
  const found = problems(uses, ciPackages(fs.readFileSync(path.join(ROOT, '.ci', 'run'), 'utf8')));
  for (const line of found) console.error(`host-deps: ${line}`);
  if (found.length > 0) process.exit(1);
  console.log(`host-deps: ${new Set(uses.map((u) => u.name)).size} host paths and commands, each installed by .ci/run`);
}
