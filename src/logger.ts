import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * Secrets never reach a log line. Call sites log no secrets by design; these paths are the net under them,
 * in case a header, body or error object is logged whole.
 */
const REDACT_PATHS = [
  'authorization',
  'token',
  'accessToken',
  'apiKey',
  'key',
  'secret',
  'uploadUrl',
  'password',
  '*.authorization',
  '*.token',
  '*.accessToken',
  '*.apiKey',
  '*.key',
  '*.secret',
  '*.uploadUrl',
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'headers.cookie',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'shieldgate' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      serializers: { err: pino.stdSerializers.err },
    },
    destination,
  );
}

/** Paths that carry a credential (the upload token) are logged without it. */
export function redactPath(path: string): string {
  return path.replace(/^\/v1\/uploads\/[^/?]+/, '/v1/uploads/[redacted]').replace(/\?.*$/, '');
}
