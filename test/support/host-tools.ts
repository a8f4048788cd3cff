/**
 * The host commands and files that tests, tools and benches use, each with the Debian package that owns it
 * (`dpkg -S`, checked by test/unit/host-tools.test.ts) and, where that package comes in as a dependency, the package
 * `.ci/run` installs for it (`installedBy`). scripts/host-deps.ts (in `npm run check`) fails when a use is not here
 * or its package is not installed by `.ci/run`.
 *
 * `run`, `runSync` and `requireHostPath` turn a missing tool into one line naming the package, instead of a bare ENOENT or an
 * assertion on an empty list.
 */
import { execFile, execFileSync, type ExecFileOptions, type ExecFileSyncOptions } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';

export interface HostTool { debian: string; installedBy?: string }

export const HOST_TOOLS: Record<string, HostTool> = {
  // Android packaging and signing: the oracles of the APK tests.
  aapt: { debian: 'aapt' },
  aapt2: { debian: 'aapt' },
  apksigner: { debian: 'apksigner' },
  zipalign: { debian: 'zipalign' },
  dexdump: { debian: 'dexdump' },
  smali: { debian: 'libsmali-java' },
  baksmali: { debian: 'libsmali-java' },
  '/usr/share/android-framework-res/framework-res.apk': { debian: 'android-framework-res' },
  '/usr/share/apktool': { debian: 'apktool' },
  '/usr/share/java/apksig.jar': { debian: 'libapksig-java' },
  '/usr/share/java/commons-lang3.jar': { debian: 'libcommons-lang3-java' },
  '/usr/share/java/commons-compress.jar': { debian: 'libcommons-compress-java' },
  '/usr/share/java/guava.jar': { debian: 'libguava-java' },
  // Java: D8's input, jarsigner's verdicts, keystores.
  java: { debian: 'openjdk-17-jre-headless', installedBy: 'openjdk-17-jdk-headless' },
  javac: { debian: 'openjdk-17-jdk-headless' },
  jarsigner: { debian: 'openjdk-17-jdk-headless' },
  keytool: { debian: 'openjdk-17-jre-headless', installedBy: 'openjdk-17-jdk-headless' },
  // Native code: the ELF and Mach-O corpora.
  gcc: { debian: 'gcc' },
  'aarch64-linux-gnu-gcc': { debian: 'gcc-aarch64-linux-gnu' },
  'arm-linux-gnueabihf-gcc': { debian: 'gcc-arm-linux-gnueabihf' },
  'aarch64-linux-gnu-objcopy': { debian: 'binutils-aarch64-linux-gnu', installedBy: 'gcc-aarch64-linux-gnu' },
  objcopy: { debian: 'binutils' },
  readelf: { debian: 'binutils' },
  clang: { debian: 'clang' },
  'ld.lld': { debian: 'lld' },
  'ld64.lld-14': { debian: 'lld-14', installedBy: 'lld' },
  'llvm-lipo-14': { debian: 'llvm-14', installedBy: 'llvm' },
  'llvm-otool-14': { debian: 'llvm-14', installedBy: 'llvm' },
  'llvm-nm': { debian: 'llvm' },
  '/usr/lib/x86_64-linux-gnu/libc.so.6': { debian: 'libc6' },
  '/usr/lib/x86_64-linux-gnu/libz.so.1': { debian: 'zlib1g' },
  '/usr/lib/x86_64-linux-gnu/libstdc++.so.6': { debian: 'libstdc++6' },
  // Packages, plists, certificates.
  zip: { debian: 'zip' },
  unzip: { debian: 'unzip' },
  plistutil: { debian: 'libplist-utils' },
  openssl: { debian: 'openssl' },
  // Servers and the browser.
  'redis-server': { debian: 'redis-server' },
  chromium: { debian: 'chromium' },
  '/usr/bin/chromium': { debian: 'chromium' },
  // The README's examples and the benches.
  git: { debian: 'git' },
  curl: { debian: 'curl' },
  jq: { debian: 'jq' },
  '/usr/bin/time': { debian: 'time' },
  // Part of every Debian system (Essential or required).
  sh: { debian: 'dash' },
  bash: { debian: 'bash' },
  touch: { debian: 'coreutils' },
  mkdir: { debian: 'coreutils' },
  mktemp: { debian: 'coreutils' },
  cp: { debian: 'coreutils' },
  realpath: { debian: 'coreutils' },
  dpkg: { debian: 'dpkg' },
  'dpkg-query': { debian: 'dpkg' },
  sha256sum: { debian: 'coreutils' },
  tar: { debian: 'tar' },
  mount: { debian: 'mount' },
  umount: { debian: 'mount' },
  fallocate: { debian: 'util-linux' },
};

/** Packages every Debian 12 system has (Essential: yes, or Priority: required; libstdc++6 because apt needs it). */
export const BASE_PACKAGES = new Set(['bash', 'dash', 'coreutils', 'dpkg', 'tar', 'mount', 'util-linux', 'libc6', 'zlib1g', 'libstdc++6']);

/** Commands that come from elsewhere than Debian: the Node runtime and npm, and this repository's own build. */
export const NOT_DEBIAN = new Set(['node', 'npm', 'npx', 'tsx', 'go', 'cargo', 'rcodesign', 'ferretdb', 'versitygw']);

/** The table entry for a command or path, or undefined. */
export function hostPackageOf(name: string): (HostTool & { key: string }) | undefined {
  return Object.hasOwn(HOST_TOOLS, name) ? { key: name, ...HOST_TOOLS[name] } : undefined;
}

/** One line: what is missing and what to install. */
export function missingHostTool(name: string): string {
  const tool = hostPackageOf(name);
  const pkg = tool ? tool.installedBy ?? tool.debian : undefined;
  return pkg
    ? `host tool missing: ${name} (install Debian's ${pkg}: apt-get install ${pkg}; .ci/run installs it)`
    : `host tool missing: ${name} (not in test/support/host-tools.ts)`;
}

/** The path, or a one-line error naming the package when the host lacks it. */
export function requireHostPath(p: string): string {
  if (!existsSync(p)) throw new Error(missingHostTool(p));
  return p;
}

const execFileAsync = promisify(execFile);

type BufferOptions = ExecFileOptions & { encoding: 'buffer' | null };

/**
 * execFile as a promise (stdout and stderr as strings, or Buffers with `encoding: 'buffer'`), with a missing command
 * reported as one line naming its Debian package.
 */
export async function run(file: string, args: readonly string[], options: BufferOptions): Promise<{ stdout: Buffer; stderr: Buffer }>;
export async function run(file: string, args?: readonly string[], options?: ExecFileOptions): Promise<{ stdout: string; stderr: string }>;
export async function run(file: string, args: readonly string[] = [], options: ExecFileOptions | BufferOptions = {}): Promise<{ stdout: string | Buffer; stderr: string | Buffer }> {
  try {
    return await execFileAsync(file, args, options as ExecFileOptions);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ENOENT' && e.path === file) throw new Error(missingHostTool(file));
    throw err;
  }
}

/** execFileSync with a missing command reported as one line naming its Debian package (as `run`). */
export function runSync(file: string, args: readonly string[], options: ExecFileSyncOptions & { encoding: BufferEncoding }): string;
export function runSync(file: string, args?: readonly string[], options?: ExecFileSyncOptions): Buffer;
export function runSync(file: string, args: readonly string[] = [], options: ExecFileSyncOptions = {}): string | Buffer {
  try {
    return execFileSync(file, args, options);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ENOENT' && e.path === file) throw new Error(missingHostTool(file));
    throw err;
  }
}
