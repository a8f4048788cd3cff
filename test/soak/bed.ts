/**
 * The soak's test bed: the same real servers as the tests (FerretDB, redis-server, versitygw), the artifact store on
 * a small file system of its own where the machine lets us mount one (so that it can be filled), and two service
 * instances (the built service, `node dist/src/main.js`) sharing them, each on its own loopback port. Instances
 * are separate processes so that a fault can kill one with SIGKILL and start it again.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, mkdtempSync, rmSync, statfsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, findRepoRoot } from '../../src/embedded/ferretdb';
import { startMongo, startRedis, startS3, type MongoServer, type RedisServer, type S3Server } from '../bed/servers';
import { sleep } from './balancer';

const ROOT = findRepoRoot(__dirname);
const HOST = '127.0.0.1';

export interface Instance {
  name: string;
  origin: string;
  port: number;
  pid(): number | null;
  kill(): void;
  start(): Promise<void>;
}

export interface SoakBed {
  dir: string;
  mongo: MongoServer;
  redis: RedisServer;
  s3: S3Server;
  bucket: string;
  env: Record<string, string>;
  instances: Instance[];
  /** Why the store's file system cannot be filled here, or null when it can. */
  diskSkipReason: string | null;
  stop(): Promise<void>;
}

/** Mounts a tmpfs of `sizeMb` at `dir`; the reason it could not, or null. */
function mountSmallFs(dir: string, sizeMb: number): string | null {
  if (os.platform() !== 'linux') return 'not Linux: no tmpfs to mount';
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m,mode=0700`, 'shieldgate-soak', dir], { encoding: 'utf8' });
  if (r.status !== 0) return `cannot mount a tmpfs (${(r.stderr || r.error?.message || 'mount failed').trim()}): a full disk needs root and CAP_SYS_ADMIN`;
  return null;
}

export async function startSoakBed(options: { storeMb: number; scanLeaseS: number; logDir?: string }): Promise<SoakBed> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'shieldgate-soak-'));
  const storeDir = path.join(dir, 'store');
  mkdirSync(storeDir);
  const diskSkipReason = mountSmallFs(storeDir, options.storeMb);
  const unmount = () => {
    if (!diskSkipReason) spawnSync('umount', ['-l', storeDir]);
  };
  process.once('exit', () => {
    unmount();
    rmSync(dir, { recursive: true, force: true });
  });

  const [mongo, redis, s3] = await Promise.all([startMongo(), startRedis(), startS3({ root: storeDir })]);
  const bucket = 'soak';
  const env: Record<string, string> = {
    MONGODB_URI: mongo.uri,
    MONGODB_DATABASE: 'soak',
    REDIS_URL: redis.url,
    ARTIFACT_STORE: 's3',
    S3_BUCKET: bucket,
    S3_ENDPOINT: s3.endpoint,
    S3_REGION: s3.region,
    S3_ACCESS_KEY_ID: s3.accessKeyId,
    S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'on',
    SCAN_JOB_LEASE_S: String(options.scanLeaseS),
    LOG_LEVEL: 'warn',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
  const logDir = options.logDir ?? dir;
  const instances: Instance[] = [];
  for (const name of ['a', 'b']) instances.push(await instance(name, env, path.join(dir, `data-${name}`), logDir));
  // One public address for both, as behind a load balancer: it is the issuer of upload tokens, which either verifies.
  env.PUBLIC_BASE_URL = instances[0].origin;
  await Promise.all(instances.map((i) => i.start()));

  return {
    dir, mongo, redis, s3, bucket, env, instances, diskSkipReason,
    stop: async () => {
      for (const i of instances) i.kill();
      await Promise.allSettled([mongo.stop(), redis.stop(), s3.stop()]);
      unmount();
    },
  };
}

async function instance(name: string, shared: Record<string, string>, dataDir: string, logDir: string): Promise<Instance> {
  const port = await freePort();
  const origin = `http://${HOST}:${port}`;
  const log = createWriteStream(path.join(logDir, `instance-${name}.log`), { flags: 'a' });
  let child: ChildProcess | null = null;
  return {
    name,
    origin,
    port,
    pid: () => child?.pid ?? null,
    kill: () => {
      child?.kill('SIGKILL');
      child = null;
    },
    start: async () => {
      const env = { ...process.env, ...shared, PORT: String(port), HOST, DATA_DIR: dataDir };
      const started = spawn(process.execPath, [path.join(ROOT, 'dist', 'src', 'main.js')], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
      child = started;
      started.stdout?.pipe(log, { end: false });
      started.stderr?.pipe(log, { end: false });
      process.once('exit', () => started.kill('SIGKILL'));
      await waitReady(origin, started);
    },
  };
}

/** Until /readyz answers 200 (the database answers, and Redis), or the process dies. */
export async function waitReady(origin: string, child?: ChildProcess, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child && child.exitCode !== null) throw new Error(`instance ${origin} exited with ${child.exitCode} while starting`);
    try {
      const res = await fetch(`${origin}/readyz`, { signal: AbortSignal.timeout(2_000) });
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`instance ${origin} not ready within ${timeoutMs} ms`);
}

/**
 * Fills the store's file system but for about `leaveBytes`; returns what frees the space again. Uploads go on while
 * it fills, so the free space measured can be gone by the time it is claimed: a piece refused for want of space is
 * removed, and the rest is claimed again, measured anew, by a further piece (at most 20).
 */
export async function fillDisk(storeDir: string, leaveBytes = 64 * 1024): Promise<() => void> {
  const pieces: string[] = [];
  const release = () => pieces.forEach((piece) => rmSync(piece, { force: true }));
  for (let i = 0; i < 20; i++) {
    const stat = statfsSync(storeDir);
    const free = Number(stat.bavail) * Number(stat.bsize);
    if (free <= leaveBytes * 2) return release;
    const piece = path.join(storeDir, `.soak-ballast-${i}`);
    pieces.push(piece);
    const r = spawnSync('fallocate', ['-l', String(free - leaveBytes), piece], { encoding: 'utf8' });
    if (r.status === 0) continue;
    rmSync(piece, { force: true });
    if (!/No space left/i.test(r.stderr)) {
      release();
      throw new Error(`fallocate failed: ${r.stderr}`);
    }
  }
  return release;
}
