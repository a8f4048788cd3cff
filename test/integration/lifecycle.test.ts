// Protects: the process lifecycle: a bad configuration stops start-up with one clear line (and so does production
// without KEY_ENCRYPTION_KEY); /healthz and /readyz;
// SIGTERM lets in-flight requests finish before the process exits.
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { testBedEnv, readJson } from '../support/harness';
import { loadConfig } from '../../src/core/config';
import { createDeps, closeDeps } from '../../src/bootstrap';
import { createLogger } from '../../src/core/logger';
import { createApp } from '../../src/services/apps-service';
import { createApiKey } from '../../src/services/keys-service';
import { operatorContext } from '../../src/services/operator-context';

const ROOT = path.join(__dirname, '..', '..');

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

function startService(env: Record<string, string>): { child: ChildProcess; stderr: () => string; exited: Promise<number> } {
  const child = spawn(process.execPath, ['-r', 'tsx/cjs', 'src/main.ts'], { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d) => (err += String(d)));
  const exited = new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? -1)));
  return { child, stderr: () => err, exited };
}

async function waitUp(url: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      /* starting */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} never came up`);
}

it('refuses to start on a bad configuration, with one line', async () => {
  const svc = startService({ PORT: 'eighty' });
  expect(await svc.exited).toBe(1);
  expect(svc.stderr().trim()).toBe('shieldgate: configuration error: PORT must be an integer, got "eighty"');
});

it('refuses to start in production without a key-encryption key, saying how to make one', async () => {
  const svc = startService({ NODE_ENV: 'production', KEY_ENCRYPTION_KEY: '', ALLOW_UNSEALED_KEYS: '' });
  expect(await svc.exited).toBe(1);
  const lines = svc.stderr().trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain('KEY_ENCRYPTION_KEY is required in production');
  expect(lines[0]).toContain('openssl rand -base64 32');
});

it('answers health and readiness, and drains an in-flight request on SIGTERM', async () => {
  const bed = testBedEnv();
  const dbName = `t_life_${randomBytes(4).toString('hex')}`;
  const mongo = new MongoClient(bed.MONGODB_URI);
  await mongo.connect();
  const deps = await createDeps(loadConfig({ MONGODB_URI: bed.MONGODB_URI, MONGODB_DATABASE: dbName }), { mongo, logger: createLogger('silent') });
  const app = await createApp(operatorContext(deps), { name: 'life', plan: 'indie' });
  const { key } = await createApiKey(operatorContext(deps), { appId: app._id, scopes: ['builds:write'], mode: 'live' });
  await closeDeps(deps, { closeMongo: false });

  const port = await freePort();
  const svc = startService({ PORT: String(port), MONGODB_URI: bed.MONGODB_URI, MONGODB_DATABASE: dbName, REDIS_URL: bed.REDIS_URL });
  try {
    await waitUp(`http://127.0.0.1:${port}/healthz`);
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(ready.status).toBe(200);
    expect(await readJson(ready)).toEqual({ status: 'ready', checks: { database: 'ok', redis: 'ok' } });

    // A request whose body is still arriving when SIGTERM comes must still be answered.
    const body = JSON.stringify({ platform: 'android', version: '1.2.3', commit: null });
    const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/v1/builds', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.write(body.slice(0, 10));
      setTimeout(() => {
        svc.child.kill('SIGTERM');
        setTimeout(() => req.end(body.slice(10)), 500);
      }, 300);
    });
    const res = await answer;
    expect(res.status).toBe(201);
    expect(JSON.parse(res.text).version).toBe('1.2.3');
    expect(await svc.exited).toBe(0);
    // And it no longer accepts connections.
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
  } finally {
    svc.child.kill('SIGKILL');
    await mongo.db(dbName).dropDatabase().catch(() => undefined);
    await mongo.close();
  }
});
