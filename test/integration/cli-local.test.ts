// Protects: local use on the embedded database, as a newcomer meets it: a second start on a busy port is one line
// naming the port and the running instance, with exit 1 and embedded.json untouched; the operator CLI says which
// database it reached, uses the running service's, and refuses to make a private one while a service runs on
// another DATA_DIR unless --data-dir asks for it; --help, app list and key list.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');
const CLI = "require('./src/cli/main.ts').runCli(process.argv.slice(1)).then((code) => process.exit(code))";
jest.setTimeout(180_000);

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** The embedded defaults, on a folder and port of this test: no MONGODB_URI, no Redis, files on disk. */
const embedded = (dataDir: string, port: number): Record<string, string> => ({
  ...process.env,
  MONGODB_URI: '',
  REDIS_URL: '',
  ARTIFACT_STORE: 'fs',
  NODE_ENV: 'development',
  LOG_LEVEL: 'warn',
  DATA_DIR: dataDir,
  PORT: String(port),
  HOST: '127.0.0.1',
});

function start(env: Record<string, string>): { child: ChildProcess; stderr: () => string; exited: Promise<number> } {
  const child = spawn(process.execPath, ['-r', 'tsx/cjs', 'src/main.ts'], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d) => (err += String(d)));
  const exited = new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? -1)));
  return { child, stderr: () => err, exited };
}

function cli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['-r', 'tsx/cjs', '-e', CLI, '--', ...args], { cwd: ROOT, env }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

async function waitHealthy(port: number): Promise<void> {
  for (let i = 0; i < 900; i++) {
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the first service never became healthy');
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'shieldgate-local-'));
const dataDir = path.join(tmp, 'service');
const otherDir = path.join(tmp, 'other');
let port: number;
let first: ReturnType<typeof start>;

beforeAll(async () => {
  port = await freePort();
  first = start(embedded(dataDir, port));
  await waitHealthy(port);
});
afterAll(async () => {
  first.child.kill('SIGTERM');
  await first.exited;
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('a second start on a busy port', () => {
  it('is one line naming the port and the running instance, exit 1, embedded.json untouched', async () => {
    const record = fs.readFileSync(path.join(dataDir, 'embedded.json'));
    const second = start(embedded(dataDir, port));
    expect(await second.exited).toBe(1);
    const lines = second.stderr().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`port ${port} (127.0.0.1) is already in use by a running shieldgate at http://127.0.0.1:${port}`);
    expect(lines[0]).toContain(`pid ${first.child.pid}, DATA_DIR ${dataDir}`);
    expect(fs.readFileSync(path.join(dataDir, 'embedded.json'))).toEqual(record);
  });

  it('on another DATA_DIR says so, and writes nothing there', async () => {
    const second = start(embedded(otherDir, port));
    expect(await second.exited).toBe(1);
    expect(second.stderr().trim()).toMatch(new RegExp(`^shieldgate: port ${port} .* running shieldgate .*on another DATA_DIR or database`));
    expect(fs.existsSync(path.join(otherDir, 'embedded.json'))).toBe(false);
  });

  it('held by another program says that instead', async () => {
    const holder = net.createServer((socket) => socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n'));
    const busy = await freePort();
    await new Promise<void>((resolve) => holder.listen(busy, '127.0.0.1', resolve));
    try {
      const second = start(embedded(otherDir, busy));
      expect(await second.exited).toBe(1);
      expect(second.stderr().trim()).toBe(`shieldgate: port ${busy} (127.0.0.1) is already in use by another program; stop it or start with another PORT`);
    } finally {
      holder.close();
    }
  });
});

describe('the operator CLI on the embedded database', () => {
  it('reaches the running service’s database, says so, and lists what it made', async () => {
    const created = await cli(['app', 'create', '--name', 'Local', '--plan', 'indie'], embedded(dataDir, port));
    expect(created.code).toBe(0);
    expect(created.stderr.trim()).toBe(`shieldgate: database shieldgate of the service running on DATA_DIR ${dataDir}`);
    const app = JSON.parse(created.stdout);
    const key = JSON.parse((await cli(['key', 'create', '--app', app.id, '--scopes', 'builds:read'], embedded(dataDir, port))).stdout);
    // The service itself sees the app: the key works against it.
    const whoami = await fetch(`http://127.0.0.1:${port}/v1/whoami`, { headers: { authorization: `Bearer ${key.key}` } });
    expect(whoami.status).toBe(200);

    const apps = JSON.parse((await cli(['app', 'list'], embedded(dataDir, port))).stdout);
    expect(apps.data.map((a: { id: string }) => a.id)).toContain(app.id);
    const keys = await cli(['key', 'list', '--app', app.id], embedded(dataDir, port));
    expect(JSON.parse(keys.stdout).data).toEqual([expect.objectContaining({ id: key.id, appId: app.id, scopes: ['builds:read'], mode: 'live', revokedAt: null })]);
    // The secret is all that follows `svc_live_<id>_`; it may itself hold '_', so it is not the last '_' part.
    const prefix = `svc_live_${key.id}_`;
    expect(key.key.startsWith(prefix)).toBe(true);
    expect(keys.stdout).not.toContain(key.key.slice(prefix.length));
    expect(keys.stdout).not.toContain('secretHash');
  });

  it('refuses a private database while a service runs on another DATA_DIR, unless --data-dir asks for one', async () => {
    const refused = await cli(['app', 'create', '--name', 'Lost', '--plan', 'indie'], embedded(otherDir, port));
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr.trim()).toBe(
      `shieldgate: a shieldgate runs at http://127.0.0.1:${port}, but not on DATA_DIR ${otherDir}: run this with the service's DATA_DIR (or MONGODB_URI), or pass --data-dir ${otherDir} to use a database of its own there`,
    );
    expect(fs.existsSync(path.join(otherDir, 'db'))).toBe(false);

    const chosen = await cli(['--data-dir', otherDir, 'app', 'list'], embedded(dataDir, port));
    expect(chosen.code).toBe(0);
    expect(chosen.stderr.trim()).toBe(`shieldgate: database shieldgate embedded under ${path.join(otherDir, 'db')}, started for this call (no service runs on this DATA_DIR)`);
    expect(JSON.parse(chosen.stdout)).toEqual({ data: [] });
  });

  it('prints its usage for --help, touching no database', async () => {
    const help = await cli(['--help'], embedded(path.join(tmp, 'none'), port));
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: shieldgate/);
    for (const command of ['app list', 'app create', 'key list', 'key create', 'key revoke', 'staff create', 'audit']) expect(help.stdout).toContain(`shieldgate ${command}`);
    expect(help.stderr).toBe('');
    expect(fs.existsSync(path.join(tmp, 'none'))).toBe(false);
  });
});
