import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, statSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

/** A running FerretDB child process. */
export interface FerretDb {
  uri: string;
  port: number;
  /** The server's process id: the soak pauses it (SIGSTOP) to stand for a stalled database. */
  pid: number;
  stop(): Promise<void>;
}

export interface StartFerretDbOptions {
  /** Directory of the SQLite files, one per database; created when missing. */
  dataDir: string;
  /** Loopback port; a free one is picked when absent. */
  port?: number;
  /** Binary to run; defaults to ferretDbBinary(findRepoRoot()). */
  binary?: string;
  /** Receives each line FerretDB logs (warnings and errors only). */
  onLog?: (line: string) => void;
  readyTimeoutMs?: number;
}

const HOST = '127.0.0.1';
const LOG_TAIL_LINES = 40;
const STOP_GRACE_MS = 5_000;

/** The checkout's root: the nearest ancestor holding tools/ferretdb (works from src/ and from dist/src/). */
export function findRepoRoot(from: string = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'tools', 'ferretdb', 'go.mod'))) return dir;
    if (path.dirname(dir) === dir) {
      throw new Error(`no tools/ferretdb found above ${from}`);
    }
  }
}

/** Path of the FerretDB binary under .cache/bin, built with Go first when missing or older than its source. */
export function ferretDbBinary(repoRoot: string): string {
  const binDir = path.join(repoRoot, '.cache', 'bin');
  const binary = path.join(binDir, 'ferretdb');
  const sourceDir = path.join(repoRoot, 'tools', 'ferretdb');
  if (existsSync(binary) && !isOlderThanSource(binary, sourceDir)) return binary;

  mkdirSync(binDir, { recursive: true });
  // Built beside the target and renamed, so a concurrent start never runs a half-written file.
  const partial = `${binary}.tmp.${process.pid}`;
  process.stderr.write('building FerretDB from tools/ferretdb (a few minutes on a cold Go cache)\n');
  // Same script as tools/install.sh: a static binary with the _id index fix and the pushdown patches applied to a
  // vendored copy (build.sh).
  const build = spawnSync('bash', [path.join(sourceDir, 'build.sh'), partial], { cwd: sourceDir, stdio: ['ignore', 'inherit', 'inherit'] });
  if (build.error) throw build.error;
  if (build.status !== 0) {
    throw new Error(`tools/ferretdb/build.sh failed with exit code ${build.status} (it needs Go 1.22+; or set MONGODB_URI)`);
  }
  renameSync(partial, binary);
  return binary;
}

/** Starts FerretDB on SQLite and resolves once it accepts TCP connections on loopback. */
export async function startFerretDb(options: StartFerretDbOptions): Promise<FerretDb> {
  const binary = options.binary ?? ferretDbBinary(findRepoRoot());
  const port = options.port ?? (await freePort());
  mkdirSync(options.dataDir, { recursive: true });

  // stdin is a pipe that we never write to: FerretDB exits when it closes,
  // which the kernel does however this process ends (even SIGKILL).
  const child = spawn(
    binary,
    ['-listen', `${HOST}:${port}`, '-dir', options.dataDir, '-log-level', 'warn', '-stdin-lifeline'],
    { stdio: ['pipe', 'ignore', 'pipe'] },
  );
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);

  const tail: string[] = [];
  let buffered = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    const lines = (buffered + chunk).split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      tail.push(line);
      if (tail.length > LOG_TAIL_LINES) tail.shift();
      options.onLog?.(line);
    }
  });

  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      process.removeListener('exit', killOnExit);
      resolve();
    });
  });
  // Without a listener a failed spawn (ENOENT) would be thrown as an unhandled 'error' event.
  const spawnFailed = new Promise<never>((_, reject) => child.once('error', reject));

  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    // FerretDB closes its connections and SQLite files on SIGTERM; a stuck one is killed.
    const force = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    await exited;
    clearTimeout(force);
  };

  try {
    await Promise.race([
      waitForPort(port, options.readyTimeoutMs ?? 30_000),
      spawnFailed,
      exited.then(() => {
        throw new Error(`FerretDB exited before accepting connections:\n${tail.join('\n')}`);
      }),
    ]);
  } catch (error) {
    await stop();
    throw error;
  }
  return { uri: `mongodb://${HOST}:${port}/`, port, pid: child.pid!, stop };
}

/** A loopback port that was free a moment ago (the usual small race with other processes is accepted). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once something accepts TCP connections on the loopback port. */
export async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await accepts(port))) {
    if (Date.now() > deadline) throw new Error(`nothing accepted connections on ${HOST}:${port} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: HOST, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function isOlderThanSource(binary: string, sourceDir: string): boolean {
  // A deployment may ship the binary without tools/: then the binary is all there is.
  if (!existsSync(sourceDir)) return false;
  const builtAt = statSync(binary).mtimeMs;
  // Same rule as tools/install.sh: any file of the Go module (its patches/ included) newer than the binary.
  const newer = (dir: string): boolean =>
    readdirSync(dir, { withFileTypes: true }).some((entry) => {
      const full = path.join(dir, entry.name);
      return entry.isDirectory() ? newer(full) : statSync(full).mtimeMs > builtAt;
    });
  return newer(sourceDir);
}
