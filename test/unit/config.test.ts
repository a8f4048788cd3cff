// Protects: configuration is validated once, with one clear line per bad value; defaults match docs/configuration.md;
// the switches that exist for tests refuse to load with NODE_ENV=production.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig, TEST_ONLY_SWITCHES } from '../../src/core/config';

describe('loadConfig', () => {
  it('runs on embedded defaults with nothing configured', () => {
    const config = loadConfig({}, '/srv/app');
    expect(config.port).toBe(8080);
    expect(config.publicBaseUrl).toBe('http://127.0.0.1:8080');
    expect(config.mongodbUri).toBeNull();
    expect(config.redisUrl).toBeNull();
    expect(config.artifactStore).toBe('fs');
    expect(config.dataDir).toBe('/srv/app/.data');
    expect(config.oidcIssuer).toBe('https://token.actions.githubusercontent.com');
    expect(config.graphqlSandbox).toBe(true);
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('derives the public base address from PORT', () => {
    expect(loadConfig({ PORT: '9000' }).publicBaseUrl).toBe('http://127.0.0.1:9000');
  });

  it.each([
    [{ PORT: 'eighty' }, /PORT must be an integer/],
    [{ PORT: '70000' }, /PORT must be between/],
    [{ PUBLIC_BASE_URL: 'api.example.com' }, /PUBLIC_BASE_URL must be an absolute URL/],
    [{ PUBLIC_BASE_URL: 'https://api.example.com/' }, /must not end with a slash/],
    [{ MONGODB_URI: 'postgres://x' }, /MONGODB_URI must use/],
    [{ REDIS_URL: 'http://x' }, /REDIS_URL must use/],
    [{ ARTIFACT_STORE: 'ftp' }, /ARTIFACT_STORE must be fs or s3/],
    [{ ARTIFACT_STORE: 's3' }, /S3_BUCKET is required/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL must be one of/],
    [{ GRAPHQL_SANDBOX: 'maybe' }, /GRAPHQL_SANDBOX must be on\/off/],
    [{ OIDC_ISSUER: 'http://issuer.example.com' }, /OIDC_ISSUER must be https/],
    [{ OIDC_ISSUER: 'http://10.0.0.1:8000', OIDC_ALLOW_INSECURE_ISSUER: 'on' }, /OIDC_ISSUER must be https/],
  ])('refuses %j', (env, message) => {
    expect(() => loadConfig(env as Record<string, string>)).toThrow(ConfigError);
    expect(() => loadConfig(env as Record<string, string>)).toThrow(message);
  });

  it('allows an http issuer on loopback only when told to', () => {
    expect(loadConfig({ OIDC_ISSUER: 'http://127.0.0.1:4000', OIDC_ALLOW_INSECURE_ISSUER: 'on' }).oidcIssuer).toBe('http://127.0.0.1:4000');
  });

  it('reads the issuers the operator allows beyond each CI provider\'s own, https only, as tokens name them', () => {
    expect(loadConfig({}).oidcAllowedIssuers).toEqual([]);
    expect(loadConfig({ OIDC_ALLOWED_ISSUERS: ' https://gitlab.example.com , https://git.example.org/gitlab ' }).oidcAllowedIssuers).toEqual([
      'https://gitlab.example.com',
      'https://git.example.org/gitlab',
    ]);
    expect(() => loadConfig({ OIDC_ALLOWED_ISSUERS: 'http://gitlab.example.com' })).toThrow(/must be https/);
    expect(() => loadConfig({ OIDC_ALLOWED_ISSUERS: 'https://gitlab.example.com/' })).toThrow(/no trailing slash/);
    expect(() => loadConfig({ OIDC_ALLOWED_ISSUERS: 'gitlab.example.com' })).toThrow(/absolute URL/);
    expect(() => loadConfig({ OIDC_ALLOWED_ISSUERS: Array.from({ length: 65 }, (_, i) => `https://g${i}.example`).join(',') })).toThrow(/at most 64/);
    expect(loadConfig({ OIDC_ALLOWED_ISSUERS: 'http://127.0.0.1:4000/gitlab', OIDC_ALLOW_INSECURE_ISSUER: 'on' }).oidcAllowedIssuers).toEqual(['http://127.0.0.1:4000/gitlab']);
  });

  it('turns the sandbox off', () => {
    expect(loadConfig({ GRAPHQL_SANDBOX: 'off' }).graphqlSandbox).toBe(false);
  });

  it('bounds static analysis by default and reads SCAN_WORKERS, SCAN_WORKER_MEMORY_MB, SCAN_DEADLINE_S', () => {
    expect(loadConfig({}).scanIsolation).toEqual({ workers: 1, memoryMb: 256, deadlineMs: 60_000 });
    expect(loadConfig({ SCAN_WORKERS: '2', SCAN_WORKER_MEMORY_MB: '512', SCAN_DEADLINE_S: '5' }).scanIsolation).toEqual({ workers: 2, memoryMb: 512, deadlineMs: 5_000 });
    expect(() => loadConfig({ SCAN_WORKER_MEMORY_MB: '8' })).toThrow(/SCAN_WORKER_MEMORY_MB must be between/);
    expect(() => loadConfig({ SCAN_DEADLINE_S: '0' })).toThrow(/SCAN_DEADLINE_S must be between/);
  });
});

describe('KEY_ENCRYPTION_KEY', () => {
  const secret = 'c2VjcmV0LWJ1dC10b28tc2hvcnQ=';
  it('takes 32 bytes in base64 or base64url', () => {
    const bytes = Buffer.alloc(32, 0xfb);
    expect(loadConfig({ KEY_ENCRYPTION_KEY: bytes.toString('base64') }).keyEncryptionKey).toEqual(bytes);
    expect(loadConfig({ KEY_ENCRYPTION_KEY: bytes.toString('base64url') }).keyEncryptionKey).toEqual(bytes);
    expect(loadConfig({}).keyEncryptionKey).toBeNull();
  });
  it('refuses anything else without repeating the value', () => {
    for (const value of [secret, 'not base64 at all!', Buffer.alloc(33).toString('base64')]) {
      let message = '';
      try {
        loadConfig({ KEY_ENCRYPTION_KEY: value });
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toBe('KEY_ENCRYPTION_KEY must be 32 random bytes in base64 (for example: openssl rand -base64 32)');
    }
  });
});

describe('production without KEY_ENCRYPTION_KEY', () => {
  it('refuses to start, saying in one line how to make a key', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(ConfigError);
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/^KEY_ENCRYPTION_KEY is required in production: make one with `openssl rand -base64 32`[^\n]*$/);
  });
  it('starts when the operator chose clear keys, or gave a key', () => {
    expect(loadConfig({ NODE_ENV: 'production', ALLOW_UNSEALED_KEYS: '1' }).keyEncryptionKey).toBeNull();
    expect(loadConfig({ NODE_ENV: 'production', KEY_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') }).keyEncryptionKey).not.toBeNull();
    expect(loadConfig({ NODE_ENV: 'development' }).keyEncryptionKey).toBeNull();
  });
});

describe('test-only switches', () => {
  const production = { NODE_ENV: 'production', KEY_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') };
  it('lists every *_ALLOW_INSECURE* switch the configuration reads', () => {
    const source = readFileSync(path.join(__dirname, '../../src/core/config.ts'), 'utf8');
    const read = new Set(source.match(/\b[A-Z_]*_ALLOW_INSECURE[A-Z_]*\b/g));
    expect(read.size).toBeGreaterThan(0);
    for (const name of read) expect(TEST_ONLY_SWITCHES).toContain(name);
  });
  it.each(TEST_ONLY_SWITCHES.map((name) => [name]))('refuses %s with NODE_ENV=production, in one line naming it', (name) => {
    for (const on of ['1', 'on', 'true']) {
      const load = () => loadConfig({ ...production, [name]: on });
      expect(load).toThrow(ConfigError);
      expect(load).toThrow(new RegExp(`^${name} is for tests only and is refused with NODE_ENV=production: unset it$`));
    }
  });
  it.each(TEST_ONLY_SWITCHES.map((name) => [name]))('accepts %s turned off in production, and turned on elsewhere', (name) => {
    expect(() => loadConfig({ ...production, [name]: 'off' })).not.toThrow();
    expect(() => loadConfig({ NODE_ENV: 'test', [name]: 'on' })).not.toThrow();
    expect(() => loadConfig({ [name]: 'on' })).not.toThrow();
  });
  it('names the switch before any other complaint (an insecure issuer with an http address)', () => {
    expect(() => loadConfig({ ...production, OIDC_ISSUER: 'http://127.0.0.1:4000', OIDC_ALLOW_INSECURE_ISSUER: 'on' })).toThrow(/^OIDC_ALLOW_INSECURE_ISSUER is for tests only/);
    expect(loadConfig({ NODE_ENV: 'test', OIDC_ISSUER: 'http://127.0.0.1:4000', OIDC_ALLOW_INSECURE_ISSUER: 'on' }).oidcAllowInsecureIssuer).toBe(true);
    expect(loadConfig({ NODE_ENV: 'test', WEBHOOK_ALLOW_INSECURE_LOOPBACK: '1' }).webhookAllowInsecureLoopback).toBe(true);
  });
});

describe('METRICS_TOKEN', () => {
  it('is optional, and when set must be long enough not to be guessed, without spaces', () => {
    expect(loadConfig({}).metricsToken).toBeNull();
    expect(loadConfig({ METRICS_TOKEN: 'a'.repeat(16) }).metricsToken).toBe('a'.repeat(16));
    expect(() => loadConfig({ METRICS_TOKEN: 'short' })).toThrow(/^METRICS_TOKEN must be 16 to 256 printable characters/);
    expect(() => loadConfig({ METRICS_TOKEN: 'has a space in it ok' })).toThrow(ConfigError);
    // The message never repeats the value.
    expect(() => loadConfig({ METRICS_TOKEN: 'secret-but-short' + ' ' })).toThrow(expect.objectContaining({ message: expect.not.stringContaining('secret-but-short') }));
  });
});
