// Protects: the access log (src/http/access-log.ts). One line per request with the request id, method,
// operation and route template, status, duration and bytes; a request whose client went away is logged with
// `aborted: true`; and no secret a request carries (API key, staff token, access token, upload URL signature, query
// string, cookie, device id) nor one an answer carries (a created key's secret) reaches the log.
import { createHash, randomBytes } from 'node:crypto';
import { startHarness, bearer, json, type Harness, readJson } from '../support/harness';
import { accessLines as accessLinesOf, captureLogs, until } from '../support/log-capture';
import { put } from './uploads-support';
import { registerBuild } from './scans-support';
import { parseExposition, sumOf } from '../support/prometheus';

let h: Harness;
let lines: string[];
beforeAll(async () => {
  h = await startHarness({ jobs: false });
});
afterAll(async () => h.close());
beforeEach(() => {
  lines = captureLogs(h);
});

const accessLines = () => accessLinesOf(lines);

it('writes one line per request: id, method, operation, route template, status, duration, bytes', async () => {
  const { appId } = await h.newApp();
  const { key } = await h.newKey(appId, ['builds:read']);
  const res = await h.api('/v1/whoami', { headers: { ...bearer(key), 'x-request-id': 'req-access-log-0001' } });
  expect(res.status).toBe(200);
  const body = await res.text();
  await until(() => accessLines().length === 1, 'the access line');
  const [line] = accessLines();
  expect(line).toMatchObject({
    level: 30,
    requestId: 'req-access-log-0001',
    method: 'GET',
    api: 'v1',
    operation: 'whoami',
    route: '/v1/whoami',
    status: 200,
    credential: 'api_key',
    appId,
  });
  expect(line.ms).toEqual(expect.any(Number));
  expect(line.resBytes).toBeGreaterThan(Buffer.byteLength(body));
  expect(line).not.toHaveProperty('aborted');
  expect(line).not.toHaveProperty('req');
  expect(line).not.toHaveProperty('res');
});

it('logs an upload the client abandoned halfway as aborted, and counts it so', async () => {
  const { appId } = await h.newApp();
  const { key } = await h.newKey(appId, ['builds:write', 'builds:read']);
  const bytes = randomBytes(512 * 1024);
  const build = await registerBuild(h, key, { platform: 'android', version: '1.0.0', commit: null, artifact: { sizeBytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') } });
  const before = parseExposition(await (await h.api('/metrics')).text());
  await put(build.artifact.uploadUrl, bytes, { disconnectAfter: 128 * 1024 });
  await until(() => accessLines().some((l) => l.operation === 'uploadBuildArtifact'), 'the upload line');
  const line = accessLines().find((l) => l.operation === 'uploadBuildArtifact');
  expect(line).toMatchObject({ level: 40, aborted: true, method: 'PUT', api: 'v1', route: '/v1/uploads/[redacted]', reqBytes: bytes.length, status: null });
  // The store discards the partial object after the connection closed: its outcome is counted once it has.
  let after = parseExposition(await (await h.api('/metrics')).text());
  for (let i = 0; i < 100 && sumOf(after, 'shieldgate_uploads_total') === sumOf(before, 'shieldgate_uploads_total'); i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    after = parseExposition(await (await h.api('/metrics')).text());
  }
  const aborted = { api: 'v1', operation: 'uploadBuildArtifact', status: 'aborted' };
  expect(sumOf(after, 'shieldgate_http_requests_total', aborted) - sumOf(before, 'shieldgate_http_requests_total', aborted)).toBe(1);
  const outcomes = after.filter((s) => s.name === 'shieldgate_uploads_total' && s.value !== sumOf(before, s.name, s.labels)).map((s) => s.labels.outcome);
  expect(outcomes).toEqual(['client_gone']);
  expect(sumOf(after, 'shieldgate_uploads_in_flight')).toBe(0);
});

it('never logs a secret a request or its answer carries', async () => {
  const { appId } = await h.newApp();
  const { key } = await h.newKey(appId, ['builds:write', 'builds:read', 'threats:read']);
  const { key: deviceKey } = await h.newKey(appId, ['events:ingest']);
  const admin = await h.newStaff('admin');
  const deviceId = `device-${randomBytes(12).toString('hex')}`;
  const querySecret = randomBytes(18).toString('base64url');
  const cookie = `session=${randomBytes(18).toString('base64url')}`;
  // Shaped like an access token (a compact JWS); refused, but it was sent.
  const accessToken = `eyJhbGciOiJFUzI1NiJ9.${Buffer.from(JSON.stringify({ sub: randomBytes(9).toString('hex') })).toString('base64url')}.${randomBytes(32).toString('base64url')}`;
  const bytes = randomBytes(1024);
  const build = await registerBuild(h, key, { platform: 'android', version: '1.0.0', commit: null, artifact: { sizeBytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') } });
  const uploadUrl: string = build.artifact.uploadUrl;
  const uploadToken = uploadUrl.slice(uploadUrl.lastIndexOf('/') + 1);

  await until(() => accessLines().length === 1, 'the line of the registration');
  const statuses: number[] = [];
  const call = async (path: string, init?: RequestInit) => {
    const res = await h.api(path, init);
    statuses.push(res.status);
    return res;
  };
  await call(`/v1/apps/${appId}/threats?cursor=${querySecret}`, { headers: { ...bearer(key), cookie } });
  await call('/v1/whoami', { headers: bearer(accessToken) });
  await call(`/v1/apps/${appId}/threats?deviceId=${deviceId}`, { headers: bearer(key) });
  await call('/v1/events', {
    method: 'POST',
    headers: json(deviceKey),
    body: JSON.stringify({ events: [{ detection: 'root_jailbreak', verdict: 'suspicious', confidence: 0.5, action: 'warn', signals: ['su'], occurredAt: h.clock.now().toISOString(), deviceId }] }),
  });
  await call(`/v1/nothing-here/${key}?sig=${querySecret}`, { headers: { cookie } });
  const created = await call('/graphql', {
    method: 'POST',
    headers: { ...json(admin), cookie },
    body: JSON.stringify({ query: 'mutation($a: ID!) { createApiKey(input: { appId: $a, scopes: ["builds:read"] }) { key } }', variables: { a: appId } }),
  });
  const createdKey: string = (await readJson(created)).data.createApiKey.key;
  const uploaded = await put(`${uploadUrl}?X-Signature=${querySecret}`, bytes);
  statuses.push(uploaded.status);
  expect(statuses).toEqual([400, 401, 400, 202, 404, 200, 422]);
  // Every request was logged (so the absence below is not that of the lines themselves).
  await until(() => accessLines().length === 1 + statuses.length, 'every access line');

  const text = lines.join('');
  const secrets = {
    apiKey: key,
    // svc_<mode>_<id>_<secret>: the secret is base64url, so it may hold '_' itself; the id never does.
    apiKeySecret: key.split('_').slice(3).join('_'),
    deviceKey,
    staffToken: admin,
    accessToken,
    createdKey,
    uploadToken,
    uploadSignature: uploadToken.slice(uploadToken.lastIndexOf('.') + 1),
    querySecret,
    cookie: cookie.slice('session='.length),
    deviceId,
  };
  const leaked = Object.entries(secrets).filter(([, secret]) => text.includes(secret)).map(([kind]) => kind);
  expect(leaked).toEqual([]);
  // Route templates only (the logger masks even the upload route's template, as it masks any upload path).
  expect(accessLines().map((l) => l.route).slice(1)).toEqual(['/v1/apps/{id}/threats', '/v1/whoami', '/v1/apps/{id}/threats', '/v1/events', 'unmatched', '/graphql', '/v1/uploads/[redacted]']);
});
