import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * Secrets never reach a log line. Call sites log no secrets by design; this is the net under them, in case a header,
 * body, document or error is logged whole. Field names are matched case-insensitively at every depth (pino's own
 * redact paths name fixed depths and exact case, and miss `headers.Authorization` or `a.b.c.token`).
 */
const SECRET_FIELDS = new Set(
  [
    'authorization',
    'proxy-authorization',
    'cookie',
    'set-cookie',
    'x-api-key',
    'token',
    'accessToken',
    'refreshToken',
    'idToken',
    'apiKey',
    'key',
    'secret',
    'secretHash',
    'clientSecret',
    'password',
    'uploadUrl',
    'privateJwk',
    'sealedJwk',
    'deviceId',
    'keyEncryptionKey',
  ].map((name) => name.toLowerCase()),
);

/**
 * Credentials recognisable by their shape, wherever they appear in a string (an error message quoting a header, a URL):
 * API keys, staff tokens, webhook secrets, compact JWS (access and OIDC tokens), upload URLs.
 */
const SECRET_SHAPES: Array<[RegExp, string]> = [
  [/\bsvc_(live|test)_[A-Za-z0-9]+_[A-Za-z0-9_-]+/g, 'svc_$1_[redacted]'],
  [/\bstf_[A-Za-z0-9]+_[A-Za-z0-9_-]+/g, 'stf_[redacted]'],
  [/\bwhsec_[A-Za-z0-9+/=_-]+/g, 'whsec_[redacted]'],
  // A match may start only where no token character precedes it: with `\b`, every `eyJ` after a `-` was a new start
  // rescanning the rest of the text, quadratic in a path like /eyJ-eyJ-eyJ-... that any client can send.
  [/(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g, '[redacted jwt]'],
  [/\/v1\/uploads\/[^/?#\s"']+/g, '/v1/uploads/[redacted]'],
];

const CENSOR = '[redacted]';
/** The walk is bounded: a log call never costs more than this, whatever it was given. */
const MAX_DEPTH = 8;
const MAX_NODES = 2000;

const MAX_PATH = 1024;
/** Longer strings are cut before they are scrubbed: a log line is no place for them, and scrubbing stays cheap. */
const MAX_STRING = 8192;

function scrubString(text: string): string {
  let out = text.length > MAX_STRING ? `${text.slice(0, MAX_STRING)}...[${text.length - MAX_STRING} more characters]` : text;
  for (const [shape, replacement] of SECRET_SHAPES) out = out.replace(shape, replacement);
  return out;
}

/**
 * A copy of an error, of the same class (pino's err serializer names it by its constructor), with its message and
 * stack scrubbed and its own fields walked like any object's.
 */
function scrubError(error: Error, walkField: (value: unknown) => unknown): Error {
  const copy = Object.create(Object.getPrototypeOf(error)) as Error;
  for (const [name, field] of Object.entries(error)) {
    (copy as unknown as Record<string, unknown>)[name] = SECRET_FIELDS.has(name.toLowerCase()) ? CENSOR : walkField(field);
  }
  Object.defineProperty(copy, 'message', { value: scrubString(error.message), enumerable: false });
  Object.defineProperty(copy, 'stack', { value: error.stack ? scrubString(error.stack) : undefined, enumerable: false });
  if (error.cause !== undefined) Object.defineProperty(copy, 'cause', { value: walkField(error.cause), enumerable: false });
  return copy;
}

/** A copy of `value` with secret fields censored and secret shapes masked; the caller's object is never changed. */
export function redactSecrets(value: unknown): unknown {
  let nodes = 0;
  const seen = new WeakSet<object>();
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') return scrubString(v);
    if (v === null || typeof v !== 'object') return v;
    if (++nodes > MAX_NODES || depth > MAX_DEPTH) return '[truncated]';
    if (seen.has(v)) return '[circular]';
    seen.add(v);
    if (v instanceof Error) return scrubError(v, (field) => walk(field, depth + 1));
    if (v instanceof Date) return v;
    if (Buffer.isBuffer(v) || ArrayBuffer.isView(v)) return `[${v.byteLength} bytes]`;
    if (Array.isArray(v)) return v.map((item) => walk(item, depth + 1));
    if (v instanceof Map) return walk(Object.fromEntries(v), depth);
    const out: Record<string, unknown> = {};
    for (const [name, field] of Object.entries(v)) {
      out[name] = SECRET_FIELDS.has(name.toLowerCase()) ? CENSOR : walk(field, depth + 1);
    }
    return out;
  };
  return walk(value, 0);
}

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'shieldgate' },
      // Every log call's object goes through the walk (errors included: copied with their message and stack
      // scrubbed, then serialized by pino as usual); the message string is scrubbed by the hook below.
      formatters: { log: (object) => redactSecrets(object) as Record<string, unknown> },
      serializers: { err: pino.stdSerializers.err },
      hooks: {
        logMethod(args, method) {
          const scrubbed = args.map((arg) => (typeof arg === 'string' ? scrubString(arg) : arg));
          return method.apply(this, scrubbed as Parameters<typeof method>);
        },
      },
    },
    destination,
  );
}

/** Paths that carry a credential (the upload token) are logged without it. */
export function redactPath(path: string): string {
  // A path is at most what the header limit lets in (16 KiB); the log keeps its first 1 KiB.
  const bounded = path.length > MAX_PATH ? `${path.slice(0, MAX_PATH)}...` : path;
  return bounded.replace(/^\/v1\/uploads\/[^/?]+/, '/v1/uploads/[redacted]').replace(/\?.*$/, '');
}
