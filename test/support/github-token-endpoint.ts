/**
 * GitHub Actions' OIDC token endpoint, as a job sees it: the runner gives the job ACTIONS_ID_TOKEN_REQUEST_URL (an
 * idtoken URL of the Actions service with `?api-version=2.0`) and ACTIONS_ID_TOKEN_REQUEST_TOKEN (a bearer token
 * for that endpoint). @actions/core's getIDToken appends `&audience=<url-encoded audience>` and sends
 * `Authorization: Bearer <request token>`; the answer is `{"count": <n>, "value": "<JWT>"}`. Without an audience
 * GitHub signs the token for `https://github.com/<owner>`.
 * Tokens come from a mint function, so the issuer behind the endpoint is one argument.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes, randomUUID } from 'node:crypto';

export type MintIdToken = (audience: string) => string;

export interface GitHubTokenEndpoint {
  /** The two variables the runner sets for a job with `permissions: id-token: write`. */
  env: { ACTIONS_ID_TOKEN_REQUEST_URL: string; ACTIONS_ID_TOKEN_REQUEST_TOKEN: string };
  /** Audiences asked for, in order (answered with a token). */
  readonly requests: string[];
  /** The next `count` requests are answered `status` (a hiccup of the Actions service), as GitHub answers errors. */
  failNext(count: number, status?: number): void;
  close(): Promise<void>;
}

export async function startGitHubTokenEndpoint(mint: MintIdToken, opts: { defaultOwner?: string } = {}): Promise<GitHubTokenEndpoint> {
  const requestToken = randomBytes(32).toString('base64url');
  const plan = randomUUID();
  const job = randomUUID();
  const tokenPath = `/00000000-0000-0000-0000-000000000000/_apis/distributedtask/hubs/Actions/plans/${plan}/jobs/${job}/idtoken`;
  const requests: string[] = [];
  let count = 0;
  let failures = { count: 0, status: 503 };

  const server = http.createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify(body));
    };
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method !== 'GET' || url.pathname !== tokenPath || url.searchParams.get('api-version') !== '2.0') return send(404, { message: 'Not Found' });
    // The scheme is case-insensitive (RFC 7235); the token is exact.
    const auth = /^bearer (.+)$/i.exec(req.headers.authorization ?? '');
    if (!auth || auth[1] !== requestToken) return send(401, { message: 'Unauthorized' });
    if (failures.count > 0) {
      failures.count--;
      return send(failures.status, { message: 'Service Unavailable' });
    }
    const audience = url.searchParams.get('audience') ?? `https://github.com/${opts.defaultOwner ?? 'acme'}`;
    requests.push(audience);
    send(200, { count: ++count, value: mint(audience) });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    env: { ACTIONS_ID_TOKEN_REQUEST_URL: `${base}${tokenPath}?api-version=2.0`, ACTIONS_ID_TOKEN_REQUEST_TOKEN: requestToken },
    requests,
    failNext: (n, status = 503) => {
      failures = { count: n, status };
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
