import http, { type RequestListener } from 'node:http';
import type { Config } from '../core/config';

/**
 * The HTTP server with its connection budgets. Headers must arrive within HEADERS_TIMEOUT_MS on every route (a
 * slow-headers client is answered 408 and closed); whole requests within REQUEST_TIMEOUT_MS on every route but the
 * upload, by `requestTimeout` (src/http/request-timeout.ts): Node's own requestTimeout cannot spare one route, and a
 * 500 MB upload on a slow CI link is legitimate. The upload has its stall watchdog instead (UPLOAD_IDLE_TIMEOUT_S).
 */
export function createHttpServer(config: Config, app?: RequestListener): http.Server {
  const server = http.createServer({
    headersTimeout: config.headersTimeoutMs,
    requestTimeout: 0,
    // How often Node looks for connections past headersTimeout: often enough that the timeout holds within a
    // fraction of itself (the default, 30 s, would let a slow-headers client hold its socket three times longer).
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(config.headersTimeoutMs / 4))),
  });
  if (app) server.on('request', app);
  server.keepAliveTimeout = 65_000;
  // Idle sockets are closed in the middle of a request after two minutes without a byte either way (never before
  // the upload's own watchdog, which answers a stalled body at UPLOAD_IDLE_TIMEOUT_S).
  server.timeout = Math.max(120_000, config.uploadIdleTimeoutMs + 60_000);
  return server;
}
