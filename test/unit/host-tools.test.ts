// The host-dependency check (scripts/host-deps.ts, in `npm run check`) and its table (test/support/host-tools.ts):
// the table's packages are the ones dpkg says own each file, the check fails on a planted use of a tool or path
// .ci/run does not install, and a missing tool fails with one line naming its package.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ciPackages, hostUses, problems, scanRepository } from '../../scripts/host-deps';
import { BASE_PACKAGES, HOST_TOOLS, missingHostTool, requireHostPath, run, runSync } from '../support/host-tools';

const ROOT = path.resolve(__dirname, '../..');
const installed = ciPackages(readFileSync(path.join(ROOT, '.ci', 'run'), 'utf8'));

/** The file a command runs from (`command -v`), or the path itself. */
function hostFile(name: string): string {
  if (name.startsWith('/')) return name;
  return execFileSync('sh', ['-c', 'command -v "$1"', 'sh', name], { encoding: 'utf8' }).trim();
}

/**
 * The package dpkg says owns a file, following symlinks (alternatives) when the link itself is nobody's; under
 * Debian 12's merged /usr, dpkg knows /bin and /lib files by their old names.
 */
function owner(file: string): string {
  const real = execFileSync('realpath', [file], { encoding: 'utf8' }).trim();
  const unmerged = (p: string) => p.replace(/^\/usr\/(bin|sbin|lib)\//, '/$1/');
  for (const candidate of [file, unmerged(file), real, unmerged(real)]) {
    try {
      const out = execFileSync('dpkg', ['-S', candidate], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
      // "diversion by dash from: /bin/sh" lines name no owner.
      return out.split('\n').filter((l) => !l.startsWith('diversion by'))[0].split(':')[0];
    } catch {
      // not owned under this name: try the resolved one
    }
  }
  throw new Error(`dpkg owns neither ${file} nor its target`);
}

/** Every package a package depends on, directly or not (Depends and Pre-Depends of the installed packages). */
function dependencyClosure(pkg: string): Set<string> {
  const seen = new Set<string>([pkg]);
  const queue = [pkg];
  while (queue.length > 0) {
    const next = queue.shift()!;
    let fields = '';
    try {
      fields = execFileSync('dpkg-query', ['-W', '-f=${Depends}, ${Pre-Depends}', next], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    } catch {
      continue; // a virtual package or one not installed
    }
    for (const alternative of fields.split(/[,|]/)) {
      const name = alternative.trim().split(/[\s:(]/)[0];
      if (name && !seen.has(name)) {
        seen.add(name);
        queue.push(name);
      }
    }
  }
  return seen;
}

describe('host tools', () => {
  test.each(Object.entries(HOST_TOOLS))('%s is owned by the package the table names, which .ci/run installs', (name, tool) => {
    expect(owner(hostFile(name))).toBe(tool.debian);
    const ciPackage = tool.installedBy ?? tool.debian;
    if (tool.installedBy) expect(dependencyClosure(tool.installedBy).has(tool.debian)).toBe(true);
    expect(BASE_PACKAGES.has(ciPackage) || installed.has(ciPackage)).toBe(true);
  });

  test('the repository uses no host path or command that .ci/run does not install', () => {
    expect(problems(scanRepository(), installed)).toEqual([]);
  });

  test('a planted use of an unknown command, an unknown path or an uninstalled package fails the check', () => {
    const file = path.join(ROOT, 'test', 'planted.ts');
    // A host path no package provides, assembled so that this file itself reads no such path.
    const unknownPath = ['', 'usr', 'share', 'frobnicate', 'data.bin'].join('/');
    const text = [
      "import { execFile } from 'node:child_process';",
      "execFile('frobnicate', ['--now']);",
      `const data = '${unknownPath}';`,
      "await run('apksigner', ['verify', apk]);",
      "const cc = { tool: 'riscv64-linux-gnu-gcc' };",
      "runSync('frobnicate-sync', ['-p', apk]);",
    ].join('\n');
    const uses = hostUses(file, text);
    expect(uses.map((u) => u.name)).toEqual(['frobnicate', unknownPath, 'apksigner', 'riscv64-linux-gnu-gcc', 'frobnicate-sync']);
    const withoutApksigner = new Set([...installed].filter((p) => p !== 'apksigner'));
    expect(problems(uses, withoutApksigner)).toEqual([
      "test/planted.ts:2: 'frobnicate' is not in test/support/host-tools.ts; add it with the Debian package that provides it",
      `test/planted.ts:3: '${unknownPath}' is not in test/support/host-tools.ts; add it with the Debian package that provides it`,
      "test/planted.ts:4: 'apksigner' comes from Debian's apksigner, which .ci/run does not install; add it to apt_packages",
      "test/planted.ts:5: 'riscv64-linux-gnu-gcc' is not in test/support/host-tools.ts; add it with the Debian package that provides it",
      "test/planted.ts:6: 'frobnicate-sync' is not in test/support/host-tools.ts; add it with the Debian package that provides it",
    ]);
  });

  test('a file that spawns nothing may call a run() of its own', () => {
    expect(hostUses('x.ts', "const run = (name: string) => name;\nrun('alone');")).toEqual([]);
  });

  test('a missing command fails with one line naming its package', async () => {
    await expect(run('zipalign', ['-h'], { env: { PATH: '/nonexistent' } })).rejects.toThrow(
      new Error("host tool missing: zipalign (install Debian's zipalign: apt-get install zipalign; .ci/run installs it)"),
    );
    await expect(run('aarch64-linux-gnu-objcopy', [], { env: { PATH: '/nonexistent' } })).rejects.toThrow(/install Debian's gcc-aarch64-linux-gnu/);
    expect(() => runSync('unzip', ['-v'], { env: { PATH: '/nonexistent' } })).toThrow(
      new Error("host tool missing: unzip (install Debian's unzip: apt-get install unzip; .ci/run installs it)"),
    );
  });

  test('a missing host file fails with one line naming its package', () => {
    const absent = path.join(os.tmpdir(), `shieldgate-absent-${process.pid}`);
    expect(() => requireHostPath(absent)).toThrow(`host tool missing: ${absent} (not in test/support/host-tools.ts)`);
    expect(missingHostTool('/usr/share/apktool')).toBe("host tool missing: /usr/share/apktool (install Debian's apktool: apt-get install apktool; .ci/run installs it)");
  });
});
