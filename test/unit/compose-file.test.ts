// Protects: compose.yaml starts on maintained images only, in order (every server the service depends on is
// healthy before it starts), keeps its data in named volumes, and hands the service an environment its own
// configuration loader accepts; .dockerignore keeps development data and installed trees out of the build context.
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { loadConfig } from '../../src/core/config';

const ROOT = path.join(__dirname, '..', '..');
const text = fs.readFileSync(path.join(ROOT, 'compose.yaml'), 'utf8');

interface Service {
  image?: string;
  build?: unknown;
  environment?: Record<string, string>;
  healthcheck?: { test?: string[] };
  depends_on?: Record<string, { condition?: string }> | string[];
  volumes?: string[];
}
const compose = parse(text) as { services: Record<string, Service>; volumes?: Record<string, unknown> };
const services = compose.services;
const app = services.shieldgate;

/**
 * Images maintained upstream, with the lowest major version accepted (null: the tag is a pinned release).
 * MinIO is absent on purpose: its community image left Docker Hub and is no longer maintained.
 */
const MAINTAINED: Record<string, number | null> = {
  mongo: 8,
  redis: 8,
  'valkey/valkey': 8,
  'versity/versitygw': null,
  'ghcr.io/versity/versitygw': null,
  'chrislusf/seaweedfs': null,
  'dxflrs/garage': null,
};

/** Compose's own interpolation for the forms the file uses: ${VAR:-default} and ${VAR:?message}. */
function interpolate(value: string, env: Record<string, string>): string {
  return value.replace(/\$\{([A-Z0-9_]+)(?::-([^}]*)|:\?[^}]*)?\}/g, (_m, name: string, fallback?: string) => env[name] ?? fallback ?? '');
}

describe('compose.yaml', () => {
  it('names no MinIO image, setting or host anywhere', () => {
    expect(text.toLowerCase()).not.toContain('minio');
  });

  it.each(Object.entries(services).filter(([, s]) => s.image && !s.build))('%s runs a maintained image, pinned to a version', (_name, service) => {
    const [repository, tag] = service.image!.split(':');
    expect(Object.keys(MAINTAINED)).toContain(repository);
    expect(tag).toBeDefined();
    expect(tag).not.toBe('latest');
    const floor = MAINTAINED[repository];
    if (floor !== null) expect(Number(tag.split('.')[0])).toBeGreaterThanOrEqual(floor);
  });

  it('starts the service only once every server it depends on reports healthy', () => {
    const dependsOn = app.depends_on;
    expect(dependsOn).toBeDefined();
    expect(Array.isArray(dependsOn)).toBe(false); // the short form waits for nothing but the container's start
    const needed = Object.entries(dependsOn as Record<string, { condition?: string }>);
    expect(needed.map(([name]) => name).sort()).toEqual(Object.keys(services).filter((name) => name !== 'shieldgate').sort());
    for (const [name, { condition }] of needed) {
      expect([name, condition]).toEqual([name, 'service_healthy']);
      expect(services[name].healthcheck?.test?.length).toBeGreaterThan(0);
    }
    expect(app.healthcheck?.test?.join(' ')).toMatch(/\/readyz/);
  });

  it('points the service at the compose services by name', () => {
    const env = app.environment!;
    const hosts = [env.MONGODB_URI, env.REDIS_URL, env.S3_ENDPOINT].map((url) => new URL(url).hostname);
    expect(hosts.sort()).toEqual(Object.keys(app.depends_on as object).sort());
  });

  it('keeps every server’s data in a named volume declared by the file', () => {
    const declared = Object.keys(compose.volumes ?? {});
    for (const [name, service] of Object.entries(services)) {
      if (name === 'shieldgate') continue;
      const named = (service.volumes ?? []).map((v) => v.split(':')[0]).filter((source) => !source.startsWith('.') && !source.startsWith('/'));
      expect([name, named.length]).toEqual([name, 1]);
      expect(declared).toEqual(expect.arrayContaining(named));
    }
  });

  it('gives the service an environment that its configuration accepts, with the S3 credentials versitygw is given', () => {
    const given = { KEY_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') };
    const env = Object.fromEntries(Object.entries(app.environment!).map(([k, v]) => [k, interpolate(String(v), given)]));
    const config = loadConfig({ ...env, NODE_ENV: 'production' }, '/app');
    expect(config.artifactStore).toBe('s3');
    expect(config.mongodbUri).toBe('mongodb://mongo:27017');
    const s3 = services.s3.environment!;
    expect(config.s3.credentials).toEqual({ accessKeyId: interpolate(s3.ROOT_ACCESS_KEY, given), secretAccessKey: interpolate(s3.ROOT_SECRET_KEY, given) });
    expect(new URL(config.s3.endpoint!).port).toBe(interpolate(s3.VGW_PORT, given).replace(':', ''));
  });
});

describe('.dockerignore', () => {
  const ignored = fs.readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n').map((line) => line.trim());
  it.each(['node_modules', '.data', '.cache', 'dist', '.git', 'coverage', 'test'])('keeps %s out of the build context', (entry) => {
    expect(ignored).toContain(entry);
  });
});
