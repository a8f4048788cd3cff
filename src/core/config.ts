import path from 'node:path';
import net from 'node:net';

/** Configuration is read here and only here, validated once and frozen (no other module reads process.env). */
export interface Config {
  readonly port: number;
  readonly host: string;
  readonly publicBaseUrl: string;
  readonly mongodbUri: string | null; // null: embedded database under dataDir
  readonly mongodbDatabase: string;
  readonly redisUrl: string | null; // null: in-process limiter, single instance only
  readonly artifactStore: 'fs' | 's3';
  readonly artifactDir: string;
  readonly s3: {
    readonly bucket: string;
    readonly endpoint: string | null;
    readonly region: string;
    readonly forcePathStyle: boolean;
    /** S3_ACCESS_KEY_ID / S3_SECRET_ACCESS_KEY; null: the AWS SDK's default chain (AWS_* variables, profiles, roles). */
    readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string } | null;
  };
  readonly oidcIssuer: string;
  /**
   * Device attestation's trust material (docs/attestation.md, "Trust roots"): paths of PEM files replacing the built-in
   * Apple App Attestation root (ATTEST_APPLE_ROOTS) and Google hardware attestation roots (ATTEST_GOOGLE_ROOTS), and of
   * a revocation list in Google's status.json format replacing the built-in snapshot (ATTEST_REVOCATION_LIST); null:
   * the built-in ones. Read once at start: a file that does not parse stops the process.
   */
  readonly attest: { readonly appleRoots: string | null; readonly googleRoots: string | null; readonly revocationList: string | null };
  readonly oidcAllowInsecureIssuer: boolean;
  /** OIDC_ALLOWED_ISSUERS: issuers beyond each provider's own that trust rules may name (self-managed GitLab). */
  readonly oidcAllowedIssuers: readonly string[];
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  readonly graphqlSandbox: boolean;
  /** GRAPHQL_TRUSTED_DOCUMENTS=on: staff other than admins may run only the registered (console) documents. */
  readonly graphqlTrustedDocuments: boolean;
  readonly dataDir: string;
  /** Validate responses against the OpenAPI file (tests turn it on: a drifting response fails loudly). */
  readonly validateResponses: boolean;
  /** Which proxies may set X-Forwarded-For (express "trust proxy"): client addresses key the anonymous rate limit. */
  readonly trustProxy: string | number;
  /**
   * 32 bytes (KEY_ENCRYPTION_KEY) that seal the private signing keys at rest and key the service secrets, so a copy of
   * the database alone is not enough to use either; null: both are used as stored.
   */
  readonly keyEncryptionKey: Buffer | null;
  /** An upload through which no byte moved for this long is stopped and its lock released. */
  readonly uploadIdleTimeoutMs: number;
  /** Minimum average rate of an upload body over each window of the idle timeout (KB/s); 0 turns the check off. */
  readonly uploadMinRateKbps: number;
  /** The longest one upload may take, however steadily its bytes arrive: it holds the artifact's lock and a slot. */
  readonly uploadMaxDurationMs: number;
  /** Header and request timeouts of every route but the upload (which has its stall watchdog instead). */
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  /** Uploads in flight: per app across instances (409 beyond), and on this instance (503 beyond). */
  readonly uploadsPerApp: number;
  readonly uploadsPerInstance: number;
  /** /graphql requests per 60 s window: per staff token, and per client address before authentication. */
  readonly graphqlStaffLimit: number;
  readonly graphqlAnonymousLimit: number;
  /**
   * GRAPHQL_STAFF_COST_PER_MINUTE: the query cost (src/graphql/limits.ts) a staff token may spend per 60 s window,
   * on top of its request count: an aggregate reads up to DASHBOARD_MAX_ROWS rows however few requests carry it.
   */
  readonly graphqlStaffCostPerMinute: number;
  /** Audit entries older than this are removed by a periodic sweep. */
  readonly auditRetentionDays: number;
  /**
   * Static analysis runs in worker threads (src/scan/worker): SCAN_WORKERS at once, each with a SCAN_WORKER_MEMORY_MB
   * heap and SCAN_DEADLINE_S of wall-clock time; a package that reaches either gets a `scan.incomplete` verdict.
   */
  readonly scanIsolation: { readonly workers: number; readonly memoryMb: number; readonly deadlineMs: number };
  /** How long a scan job's claim holds unrenewed (renewed every third of it): how soon a crashed instance's job runs elsewhere. */
  readonly scanJobLeaseMs: number;
  /** Threats first seen longer ago than this, and their merge records, are deleted (THREAT_RETENTION_DAYS). */
  readonly threatRetentionDays: number;
  /**
   * Bounds of one dashboard aggregate (services/dashboards-service.ts): the rows it may read (DASHBOARD_MAX_ROWS) and
   * the apps the grade distribution may visit, one read each (DASHBOARD_MAX_APPS); beyond either it is refused.
   */
  readonly dashboards: { readonly maxRows: number; readonly maxApps: number };
  /** WEBHOOK_ALLOW_INSECURE_LOOPBACK: webhooks may use http://127.0.0.1 and reach loopback (tests only). */
  readonly webhookAllowInsecureLoopback: boolean;
  /**
   * How webhook host names are resolved (src/webhooks/resolve-host.ts, c-ares, never the thread pool): the name servers
   * (WEBHOOK_DNS_SERVERS, comma-separated `address` or `address:port`; empty: the system's resolv.conf) and the wait
   * for one answer (WEBHOOK_DNS_TIMEOUT_MS, per try, two tries).
   */
  readonly webhookDns: { readonly servers: readonly string[]; readonly timeoutMs: number };
  /**
   * Webhook delivery bounds (src/webhooks): the pending deliveries an app may have queued, beyond which the oldest are
   * dropped unsent (WEBHOOK_MAX_PENDING_PER_APP), and the deadline of one attempt, DNS to the answer's last byte
   * (WEBHOOK_ATTEMPT_TIMEOUT_MS): an answer after it is a failed attempt.
   */
  readonly webhookDelivery: { readonly maxPendingPerApp: number; readonly attemptTimeoutMs: number };
  /**
   * METRICS_TOKEN: a scraper reads /metrics with `Authorization: Bearer <token>`; null: /metrics answers only
   * requests made over loopback that no proxy forwarded (src/metrics/endpoint.ts).
   */
  readonly metricsToken: string | null;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'on', 'yes'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'off', 'no'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(`${name} must be on/off (true/false), got "${raw}"`);
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be an integer, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

/** 32 bytes, base64 or base64url. The value is a secret: no message ever repeats it. */
function encryptionKey(env: Env, name: string): Buffer | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return null;
  // Node's base64 decoder reads the URL-safe alphabet too.
  const bytes = /^[A-Za-z0-9+/_-]+={0,2}$/.test(raw) ? Buffer.from(raw, 'base64') : null;
  if (!bytes || bytes.length !== 32) throw new ConfigError(`${name} must be 32 random bytes in base64 (for example: openssl rand -base64 32)`);
  return bytes;
}

function url(name: string, raw: string, protocols: string[]): string {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an absolute URL, got "${raw}"`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
  }
  return raw;
}

/**
 * OIDC_ALLOWED_ISSUERS: comma-separated issuer URLs, compared exactly with a token's `iss` (so written as the issuer
 * writes itself: no trailing slash, no path GitLab does not put there). https only, as OIDC_ISSUER.
 */
function allowedIssuers(raw: string, allowInsecure: boolean): string[] {
  const list = raw.split(',').map((entry) => entry.trim()).filter((entry) => entry.length > 0);
  if (list.length > 64) throw new ConfigError('OIDC_ALLOWED_ISSUERS lists at most 64 issuers');
  for (const entry of list) {
    const parsed = new URL(url('OIDC_ALLOWED_ISSUERS', entry, ['https:', 'http:']));
    if (parsed.protocol === 'http:' && !(allowInsecure && isLoopback(parsed.hostname))) {
      throw new ConfigError(`OIDC_ALLOWED_ISSUERS: ${entry} must be https (http only for a loopback issuer with OIDC_ALLOW_INSECURE_ISSUER=on)`);
    }
    if (entry.endsWith('/') || parsed.search || parsed.hash || parsed.username) {
      throw new ConfigError(`OIDC_ALLOWED_ISSUERS: ${entry} must be an issuer as tokens name it: no trailing slash, query, fragment or credentials`);
    }
  }
  return list;
}

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

/** WEBHOOK_DNS_SERVERS: `1.1.1.1, [2606:4700::1111]:53, 127.0.0.1:5353`, each checked as c-ares's setServers takes it. */
function dnsServers(value: string | undefined): readonly string[] {
  const servers = (value ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  for (const server of servers) {
    const bracketed = /^\[([0-9a-fA-F:.]+)\](?::(\d{1,5}))?$/.exec(server);
    const plain = /^(\d{1,3}(?:\.\d{1,3}){3})(?::(\d{1,5}))?$/.exec(server) ?? (net.isIPv6(server) ? [server, server] : null);
    const match = bracketed ?? plain;
    const port = match?.[2] === undefined ? 53 : Number(match[2]);
    if (!match || !net.isIP(match[1]) || port < 1 || port > 65535) {
      throw new ConfigError(`WEBHOOK_DNS_SERVERS: "${server}" is not an address or address:port (IPv6 in brackets with a port)`);
    }
  }
  return Object.freeze(servers);
}

/**
 * Switches that exist for the tests alone: each weakens a check a deployment relies on (an http issuer whose keys
 * anyone on the path can swap, webhooks to loopback, that is to the instance's own neighbours, or answers turned into
 * 500s naming the contract's breach). With NODE_ENV=production, one turned on stops the start (docs/configuration.md).
 */
export const TEST_ONLY_SWITCHES = ['OIDC_ALLOW_INSECURE_ISSUER', 'WEBHOOK_ALLOW_INSECURE_LOOPBACK', 'VALIDATE_RESPONSES'] as const;

function refuseTestSwitches(env: Env): void {
  if (env.NODE_ENV !== 'production') return;
  for (const name of TEST_ONLY_SWITCHES) {
    if (bool(env, name, false)) throw new ConfigError(`${name} is for tests only and is refused with NODE_ENV=production: unset it`);
  }
}

/** Reads and validates the environment; throws ConfigError with one clear line on the first bad value. */
export function loadConfig(env: Env = process.env, cwd: string = process.cwd()): Config {
  refuseTestSwitches(env);
  const port = int(env, 'PORT', 8080, 0, 65535);
  const host = env.HOST || '127.0.0.1';
  const publicBaseUrl = url('PUBLIC_BASE_URL', env.PUBLIC_BASE_URL || `http://127.0.0.1:${port}`, ['http:', 'https:']);
  if (publicBaseUrl.endsWith('/')) throw new ConfigError('PUBLIC_BASE_URL must not end with a slash');

  const mongodbUri = env.MONGODB_URI ? url('MONGODB_URI', env.MONGODB_URI, ['mongodb:', 'mongodb+srv:']) : null;
  const redisUrl = env.REDIS_URL ? url('REDIS_URL', env.REDIS_URL, ['redis:', 'rediss:']) : null;

  const artifactStore = (env.ARTIFACT_STORE || 'fs') as Config['artifactStore'];
  if (artifactStore !== 'fs' && artifactStore !== 's3') {
    throw new ConfigError(`ARTIFACT_STORE must be fs or s3, got "${env.ARTIFACT_STORE}"`);
  }
  const dataDir = path.resolve(cwd, env.DATA_DIR || '.data');
  const s3Bucket = env.S3_BUCKET || '';
  if (artifactStore === 's3' && !s3Bucket) throw new ConfigError('S3_BUCKET is required when ARTIFACT_STORE=s3');
  if (Boolean(env.S3_ACCESS_KEY_ID) !== Boolean(env.S3_SECRET_ACCESS_KEY)) {
    throw new ConfigError('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY must be set together');
  }

  const oidcAllowInsecureIssuer = bool(env, 'OIDC_ALLOW_INSECURE_ISSUER', false);
  const oidcIssuer = url('OIDC_ISSUER', env.OIDC_ISSUER || 'https://token.actions.githubusercontent.com', ['https:', 'http:']);
  const issuerUrl = new URL(oidcIssuer);
  if (issuerUrl.protocol === 'http:' && !(oidcAllowInsecureIssuer && isLoopback(issuerUrl.hostname))) {
    throw new ConfigError('OIDC_ISSUER must be https (http is allowed only for a loopback issuer with OIDC_ALLOW_INSECURE_ISSUER=on)');
  }
  const oidcAllowedIssuers = allowedIssuers(env.OIDC_ALLOWED_ISSUERS ?? '', oidcAllowInsecureIssuer);

  const keyEncryptionKey = encryptionKey(env, 'KEY_ENCRYPTION_KEY');
  // A production image started without it would store private keys in the clear without anyone having chosen to.
  if (env.NODE_ENV === 'production' && !keyEncryptionKey && !bool(env, 'ALLOW_UNSEALED_KEYS', false)) {
    throw new ConfigError('KEY_ENCRYPTION_KEY is required in production: make one with `openssl rand -base64 32` (or set ALLOW_UNSEALED_KEYS=1 to keep keys in the clear)');
  }

  const metricsToken = env.METRICS_TOKEN || null;
  // A token a scraper config holds in clear: long enough not to be guessed, printable so it fits in a header.
  if (metricsToken !== null && !/^[\x21-\x7e]{16,256}$/.test(metricsToken)) {
    throw new ConfigError('METRICS_TOKEN must be 16 to 256 printable characters without spaces (for example: openssl rand -hex 24)');
  }

  const logLevel = (env.LOG_LEVEL || 'info') as Config['logLevel'];
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);

  return Object.freeze({
    port,
    host,
    publicBaseUrl,
    mongodbUri,
    mongodbDatabase: env.MONGODB_DATABASE || 'shieldgate',
    redisUrl,
    artifactStore,
    artifactDir: path.resolve(cwd, env.ARTIFACT_DIR || path.join(dataDir, 'artifacts')),
    s3: Object.freeze({
      bucket: s3Bucket,
      endpoint: env.S3_ENDPOINT ? url('S3_ENDPOINT', env.S3_ENDPOINT, ['http:', 'https:']) : null,
      region: env.S3_REGION || 'us-east-1',
      forcePathStyle: bool(env, 'S3_FORCE_PATH_STYLE', Boolean(env.S3_ENDPOINT)),
      credentials: env.S3_ACCESS_KEY_ID ? Object.freeze({ accessKeyId: env.S3_ACCESS_KEY_ID, secretAccessKey: env.S3_SECRET_ACCESS_KEY! }) : null,
    }),
    oidcIssuer,
    oidcAllowInsecureIssuer,
    oidcAllowedIssuers,
    attest: Object.freeze({
      appleRoots: env.ATTEST_APPLE_ROOTS ? path.resolve(cwd, env.ATTEST_APPLE_ROOTS) : null,
      googleRoots: env.ATTEST_GOOGLE_ROOTS ? path.resolve(cwd, env.ATTEST_GOOGLE_ROOTS) : null,
      revocationList: env.ATTEST_REVOCATION_LIST ? path.resolve(cwd, env.ATTEST_REVOCATION_LIST) : null,
    }),
    logLevel,
    graphqlSandbox: bool(env, 'GRAPHQL_SANDBOX', true),
    graphqlTrustedDocuments: bool(env, 'GRAPHQL_TRUSTED_DOCUMENTS', false),
    dataDir,
    validateResponses: bool(env, 'VALIDATE_RESPONSES', false),
    keyEncryptionKey,
    uploadIdleTimeoutMs: int(env, 'UPLOAD_IDLE_TIMEOUT_S', 60, 1, 3600) * 1000,
    uploadMinRateKbps: int(env, 'UPLOAD_MIN_RATE_KBPS', 4, 0, 1_000_000),
    uploadMaxDurationMs: int(env, 'UPLOAD_MAX_MINUTES', 120, 1, 1440) * 60_000,
    headersTimeoutMs: int(env, 'HEADERS_TIMEOUT_MS', 10_000, 100, 600_000),
    requestTimeoutMs: int(env, 'REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000),
    uploadsPerApp: int(env, 'UPLOADS_PER_APP', 4, 1, 1000),
    uploadsPerInstance: int(env, 'UPLOADS_PER_INSTANCE', 32, 1, 10_000),
    graphqlStaffLimit: int(env, 'GRAPHQL_STAFF_LIMIT', 600, 1, 1_000_000),
    graphqlAnonymousLimit: int(env, 'GRAPHQL_ANONYMOUS_LIMIT', 30, 1, 1_000_000),
    // 20 of the console's costliest views a minute (Builds, about 6,000); at least one operation at the cost limit
    // (MAX_COST, 5,000), below which the costliest operation allowed could never run.
    graphqlStaffCostPerMinute: int(env, 'GRAPHQL_STAFF_COST_PER_MINUTE', 120_000, 5_000, 100_000_000),
    auditRetentionDays: int(env, 'AUDIT_RETENTION_DAYS', 400, 1, 36_500),
    // Defaults: a real package needs well under 64 MB of heap and a second or two; 256 MB and 60 s leave room for
    // the largest while bounding what a hostile one costs (and 60 s stays far inside the 5-minute job lease).
    scanIsolation: Object.freeze({
      workers: int(env, 'SCAN_WORKERS', 1, 1, 64),
      memoryMb: int(env, 'SCAN_WORKER_MEMORY_MB', 256, 64, 8192),
      deadlineMs: int(env, 'SCAN_DEADLINE_S', 60, 1, 3600) * 1000,
    }),
    // 5 minutes: a database stall shorter than two renewals never hands a live job to a second runner. Lower it to
    // have a crashed instance's scans resumed sooner (the holder's outcome is fenced either way).
    scanJobLeaseMs: int(env, 'SCAN_JOB_LEASE_S', 300, 15, 3600) * 1000,
    threatRetentionDays: int(env, 'THREAT_RETENTION_DAYS', 90, 1, 3650),
    dashboards: Object.freeze({
      maxRows: int(env, 'DASHBOARD_MAX_ROWS', 200_000, 1, 10_000_000),
      maxApps: int(env, 'DASHBOARD_MAX_APPS', 5_000, 1, 1_000_000),
    }),
    webhookAllowInsecureLoopback: bool(env, 'WEBHOOK_ALLOW_INSECURE_LOOPBACK', false),
    webhookDns: Object.freeze({ servers: dnsServers(env.WEBHOOK_DNS_SERVERS), timeoutMs: int(env, 'WEBHOOK_DNS_TIMEOUT_MS', 2_000, 50, 10_000) }),
    // At most 10 s: the contract promises receivers that a 2xx within 10 s is a success (src/webhooks/send.ts keeps it).
    webhookDelivery: Object.freeze({
      maxPendingPerApp: int(env, 'WEBHOOK_MAX_PENDING_PER_APP', 1_000, 10, 1_000_000),
      attemptTimeoutMs: int(env, 'WEBHOOK_ATTEMPT_TIMEOUT_MS', 10_000, 100, 10_000),
    }),
    metricsToken,
    trustProxy: env.TRUST_PROXY ? (/^\d+$/.test(env.TRUST_PROXY) ? Number(env.TRUST_PROXY) : env.TRUST_PROXY) : 'loopback',
  });
}
