/** Shared by the benchmarks: real servers on loopback, child processes, and printing. */
import { createHash, randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import type { MongoClient } from 'mongodb';
import os from 'node:os';
import path from 'node:path';
import { startFerretDb } from '../src/embedded/ferretdb';
import { REPO_ROOT } from '../src/core/paths';
import { closeDeps, createDeps } from '../src/bootstrap';
import type { Clock } from '../src/core/clock';
import { loadConfig } from '../src/core/config';
import type { Deps } from '../src/core/deps';
import { createHttpApp } from '../src/app';
import { createLogger } from '../src/core/logger';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export async function waitForHttp(url: string, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not come up`);
}

/** MONGODB_URI, or a FerretDB of our own on a temporary folder. */
export async function benchMongo(): Promise<{ uri: string; stop(): Promise<void> }> {
  if (process.env.MONGODB_URI) return { uri: process.env.MONGODB_URI, stop: async () => undefined };
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-db-'));
  // BENCH_FERRETDB=reference measures FerretDB without the pushdown patches (.cache/bin/ferretdb-reference): the "before".
  const binary = process.env.BENCH_FERRETDB === 'reference' ? path.join(REPO_ROOT, '.cache', 'bin', 'ferretdb-reference') : undefined;
  const ferret = await startFerretDb({ dataDir, binary });
  return { uri: ferret.uri, stop: async () => { await ferret.stop(); fs.rmSync(dataDir, { recursive: true, force: true }); } };
}

/** REDIS_URL, or a redis-server of our own. */
export async function benchRedis(): Promise<{ url: string; stop(): Promise<void> }> {
  if (process.env.REDIS_URL) return { url: process.env.REDIS_URL, stop: async () => undefined };
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const until = Date.now() + 10_000;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => { s.destroy(); resolve(true); });
      s.once('error', () => resolve(false));
    });
    if (ok) break;
    if (Date.now() > until) throw new Error('redis-server did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url: `redis://127.0.0.1:${port}`, stop: async () => { child.kill('SIGTERM'); } };
}

/** Runs a TypeScript entry point in its own Node process (through tsx), with the given environment. */
export function spawnTs(entry: string, env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['-r', 'tsx/cjs', path.join(REPO_ROOT, entry)], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

export function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

export const fmt = (n: number, digits = 1) => n.toFixed(digits);

/** Writes `size` random bytes to `file` (no two 4 MiB blocks alike, so nothing compresses or dedups); its SHA-256. */
export function makeRandomFile(file: string, size: number): string {
  const hash = createHash('sha256');
  const fd = fs.openSync(file, 'w');
  const block = randomBytes(4 * 1024 * 1024);
  for (let written = 0, i = 0; written < size; i++) {
    block.writeUInt32LE(i, 0);
    const n = Math.min(block.length, size - written);
    fs.writeSync(fd, block, 0, n);
    hash.update(block.subarray(0, n));
    written += n;
  }
  fs.closeSync(fd);
  return hash.digest('hex');
}

/** The service in this process, on a loopback port and a database of its own (`dbName`) of the bench's server. */
export interface InProcessService {
  deps: Deps;
  baseUrl: string;
  /** Stops the HTTP server and the service; drops its database when `dropDatabase`. */
  close(options?: { dropDatabase?: boolean }): Promise<void>;
}

export async function startInProcessService(client: MongoClient, uri: string, dbName: string, clock: Clock, env: Record<string, string> = {}): Promise<InProcessService> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const deps = await createDeps(loadConfig({ ...env, MONGODB_URI: uri, MONGODB_DATABASE: dbName, PUBLIC_BASE_URL: baseUrl, LOG_LEVEL: 'silent' }), {
    mongo: client,
    clock,
    logger: createLogger('silent'),
  });
  const { app, stop } = await createHttpApp(deps);
  server.on('request', app);
  return {
    deps,
    baseUrl,
    async close(options = {}) {
      server.closeAllConnections();
      server.close();
      await stop();
      if (options.dropDatabase) await deps.db.dropDatabase().catch(() => undefined);
      await closeDeps(deps, { closeMongo: false });
    },
  };
}

/**
 * Loads GET /v1/whoami with `connections` clients cycling through `keys`; `stop()` ends the run early, `result` still
 * resolves. `onResponse` sees each response's latency (ms) as it arrives, for figures over part of the run.
 */
export function whoamiLoad(
  url: string, keys: string[], duration: number, connections = 16, onResponse?: (latencyMs: number, status: number) => void,
): { stop(): void; result: Promise<autocannon.Result> } {
  let i = 0;
  let instance: autocannon.Instance | null = null;
  const result = new Promise<autocannon.Result>((resolve, reject) => {
    instance = autocannon(
      {
        url,
        connections,
        duration,
        requests: [{ setupRequest: (req: any) => ({ ...req, headers: { authorization: `Bearer ${keys[i++ % keys.length]}` } }) }],
      },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
    if (onResponse) instance.on('response', (_client, status, _bytes, latency) => onResponse(latency, status));
  });
  return { stop: () => instance?.stop(), result };
}

/** The `p`th percentile (0-100) of `xs`, nearest rank; NaN when empty. */
export function percentile(xs: number[], p: number): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

/** PUTs a file to `url`, streamed from disk (a 500 MB package is never held in memory); its status and body. */
export function putFile(url: string, file: string): Promise<{ status: number; body: string }> {
  const size = fs.statSync(file).size;
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'PUT', headers: { 'content-type': 'application/octet-stream', 'content-length': String(size) } }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    fs.createReadStream(file, { highWaterMark: 1024 * 1024 }).pipe(req);
  });
}

/** SHA-256 of a file, streamed; reading it also brings it into the page cache. */
export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 4 * 1024 * 1024 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
