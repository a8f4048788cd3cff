// Protects: /metrics in the Prometheus format, fed by real traffic. After a REST call, GraphQL operations, refused
// rate-limited calls, an upload and its static scan, the counters moved with the labels operators query by
// (operation ids and bounded GraphQL names, never ids or paths); database commands are timed by name; and /metrics
// is served only to the METRICS_TOKEN bearer, or without one only over a direct loopback connection.
import { startHarness, bearer, type Harness, readJson } from '../support/harness';
import { parseExposition, sumOf, type Sample } from '../support/prometheus';
import { androidManifest, buildApk, cleanupFixtures } from '../fixtures/build-packages';
import { uploadPackage, waitForStaticScan } from './scans-support';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { json } from '../support/harness';
import { event, ingest } from './threats-support';
import { WebhookWorker } from '../../src/webhooks/delivery-worker';

let h: Harness;
beforeAll(async () => {
  // Two anonymous /graphql requests per window: the third is refused, which the refusal counter must show.
  h = await startHarness({ env: { GRAPHQL_ANONYMOUS_LIMIT: '2', WEBHOOK_ALLOW_INSECURE_LOOPBACK: '1' } });
});
afterAll(async () => {
  await h.close();
  await cleanupFixtures();
});

async function scrape(target: Harness = h): Promise<Sample[]> {
  const res = await target.api('/metrics');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseExposition(await res.text());
}

function gql(token: string | null, body: Record<string, unknown>) {
  return h.api('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? bearer(token) : {}) },
    body: JSON.stringify(body),
  });
}

it('serves process metrics in the Prometheus text format', async () => {
  const samples = await scrape();
  expect(sumOf(samples, 'shieldgate_process_resident_memory_bytes')).toBeGreaterThan(0);
  expect(samples.some((s) => s.name === 'shieldgate_nodejs_eventloop_lag_seconds')).toBe(true);
});

it('counts and times a REST call by operation id and status, and times its database commands by name', async () => {
  const { appId } = await h.newApp();
  const { key } = await h.newKey(appId, ['builds:read']);
  const before = await scrape();
  expect((await h.api('/v1/whoami', { headers: bearer(key) })).status).toBe(200);
  expect((await h.api(`/v1/builds/bld_doesnotexist00000000`, { headers: bearer(key) })).status).toBe(404);
  const after = await scrape();
  const ok = { api: 'v1', operation: 'whoami', status: '200' };
  expect(sumOf(after, 'shieldgate_http_requests_total', ok) - sumOf(before, 'shieldgate_http_requests_total', ok)).toBe(1);
  expect(sumOf(after, 'shieldgate_http_request_duration_seconds_count', ok) - sumOf(before, 'shieldgate_http_request_duration_seconds_count', ok)).toBe(1);
  const missing = { api: 'v1', operation: 'getBuild', status: '404' };
  expect(sumOf(after, 'shieldgate_http_requests_total', missing) - sumOf(before, 'shieldgate_http_requests_total', missing)).toBe(1);
  // The key lookup is a find; no label anywhere carries an id or a requested path.
  const finds = { command: 'find', outcome: 'ok' };
  expect(sumOf(after, 'shieldgate_db_command_duration_seconds_count', finds)).toBeGreaterThan(sumOf(before, 'shieldgate_db_command_duration_seconds_count', finds));
  const labelValues = after.flatMap((s) => Object.values(s.labels));
  expect(labelValues.filter((v) => /app_|bld_|key_|\/v1\//.test(v))).toEqual([]);
});

it('counts GraphQL operations by name and outcome, and buckets names nobody registered', async () => {
  const staff = await h.newStaff('support');
  const before = await scrape();
  expect((await gql(staff, { query: 'query MetricsProbe { __typename }', operationName: 'MetricsProbe' })).status).toBe(200);
  expect((await gql(staff, { query: 'query MetricsProbe { __typename }', operationName: 'MetricsProbe' })).status).toBe(200);
  const invalid = await gql(staff, { query: 'query BrokenProbe { noSuchField }', operationName: 'BrokenProbe' });
  expect(invalid.status).toBe(400);
  const admin = await h.newStaff('admin');
  // A resolver's domain error: answered 200 with `errors` (an app name must not be empty).
  const failing = await readJson(await gql(admin, { query: 'mutation BadApp { createApp(input: { name: "", plan: indie }) { id } }', operationName: 'BadApp' }));
  expect(failing.errors[0].extensions.code).toBe('validation_failed');
  // Mutations need the admin role: support staff are refused (403).
  expect((await gql(staff, { query: 'mutation BadApp { createApp(input: { name: "x", plan: indie }) { id } }', operationName: 'BadApp' })).status).toBe(403);
  const after = await scrape();
  const delta = (name: string, labels: Record<string, string>) => sumOf(after, name, labels) - sumOf(before, name, labels);
  expect(delta('shieldgate_graphql_operations_total', { operation: 'MetricsProbe', outcome: 'ok' })).toBe(2);
  expect(delta('shieldgate_graphql_operations_total', { operation: 'BrokenProbe', outcome: 'invalid' })).toBe(1);
  expect(delta('shieldgate_graphql_operations_total', { operation: 'BadApp', outcome: 'error' })).toBe(1);
  expect(delta('shieldgate_graphql_operations_total', { operation: 'BadApp', outcome: 'refused' })).toBe(1);
  expect(delta('shieldgate_http_requests_total', { api: 'graphql', operation: 'MetricsProbe', status: '200' })).toBe(2);
  expect(delta('shieldgate_http_requests_total', { api: 'graphql', operation: 'BadApp', status: '403' })).toBe(1);

  // Free-form names: the first ones keep their name, then they share `other` (the series stay bounded).
  for (let i = 0; i < 60; i++) await gql(staff, { query: `query Free${i} { __typename }`, operationName: `Free${i}` });
  const later = await scrape();
  const names = new Set(later.filter((s) => s.name === 'shieldgate_graphql_operations_total').map((s) => s.labels.operation));
  expect(names.has('Free0')).toBe(true);
  expect(names.has('Free59')).toBe(false);
  expect(sumOf(later, 'shieldgate_graphql_operations_total', { operation: 'other' })).toBeGreaterThanOrEqual(1);
  expect(names.size).toBeLessThanOrEqual(60);
});

it('labels no operation a request without a staff token names: such names neither become series nor use up the free names', async () => {
  // A harness of its own: this harness allows only two anonymous requests, which the rate-limit test counts on.
  const own = await startHarness({ jobs: false });
  let before: Sample[];
  let after: Sample[];
  try {
    before = await scrape(own);
    const res = await own.api('/graphql?query=%7Bping%7D&operationName=AnonymousProbe', { headers: { 'apollo-require-preflight': 'true' } });
    expect(res.status).toBe(401);
    after = await scrape(own);
  } finally {
    await own.close();
  }
  const names = new Set(after.filter((s) => s.name === 'shieldgate_http_requests_total' || s.name === 'shieldgate_graphql_operations_total').map((s) => s.labels.operation));
  expect(names.has('AnonymousProbe')).toBe(false);
  expect(sumOf(after, 'shieldgate_http_requests_total', { api: 'graphql', operation: 'unknown', status: '401' }) - sumOf(before, 'shieldgate_http_requests_total', { api: 'graphql', operation: 'unknown', status: '401' })).toBe(1);
});

it('counts refused rate-limited calls by bucket kind, REST and GraphQL', async () => {
  const { appId } = await h.newApp('hatchling'); // 60 requests per window
  const { key } = await h.newKey(appId, ['builds:read']);
  const before = await scrape();
  let refused = 0;
  for (let i = 0; i < 61; i++) if ((await h.api('/v1/whoami', { headers: bearer(key) })).status === 429) refused++;
  expect(refused).toBe(1);
  const anonymous = [];
  for (let i = 0; i < 3; i++) anonymous.push((await gql(null, { query: '{ __typename }' })).status);
  expect(anonymous).toEqual([401, 401, 429]);
  const after = await scrape();
  const delta = (name: string, labels: Record<string, string>) => sumOf(after, name, labels) - sumOf(before, name, labels);
  expect(delta('shieldgate_rate_limit_refusals_total', { bucket: 'key' })).toBe(1);
  expect(delta('shieldgate_rate_limit_refusals_total', { bucket: 'gql-ip' })).toBe(1);
  expect(delta('shieldgate_http_requests_total', { api: 'v1', operation: 'whoami', status: '429' })).toBe(1);
  // Refused by the gate before its body was read: no operation name to give, and no GraphQL operation ran.
  expect(delta('shieldgate_http_requests_total', { api: 'graphql', operation: 'unknown', status: '429' })).toBe(1);
  expect(delta('shieldgate_graphql_operations_total', {})).toBe(0);
});

it('counts an upload (bytes, outcome, in flight) and the static scan job that follows it', async () => {
  const { appId } = await h.newApp();
  const { key } = await h.newKey(appId, ['builds:write', 'builds:read', 'scans:read']);
  const file = await buildApk({ manifest: androidManifest({ minSdk: 21, targetSdk: 34 }), sign: 'debug' });
  const before = await scrape();
  const uploaded = await uploadPackage(h, key, file, 'android');
  await waitForStaticScan(h, key, uploaded.id);
  // The scan becomes readable before its job is marked complete and counted (job-runner.ts): wait for the count.
  let after = await scrape();
  for (let i = 0; i < 100 && sumOf(after, 'shieldgate_scan_jobs_total') === sumOf(before, 'shieldgate_scan_jobs_total'); i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    after = await scrape();
  }
  const delta = (name: string, labels: Record<string, string> = {}) => sumOf(after, name, labels) - sumOf(before, name, labels);
  const { size } = await import('node:fs/promises').then((fs) => fs.stat(file));
  expect(delta('shieldgate_upload_bytes_received_total')).toBe(size);
  expect(delta('shieldgate_uploads_total', { outcome: 'stored' })).toBe(1);
  expect(sumOf(after, 'shieldgate_uploads_in_flight')).toBe(0);
  expect(delta('shieldgate_http_requests_total', { api: 'v1', operation: 'uploadBuildArtifact', status: '200' })).toBe(1);
  expect(delta('shieldgate_scan_jobs_total', { outcome: 'done' })).toBe(1);
  expect(delta('shieldgate_scan_job_duration_seconds_count', { outcome: 'done' })).toBe(1);
  expect(delta('shieldgate_scan_job_duration_seconds_sum', { outcome: 'done' })).toBeGreaterThan(0);
});

it('counts webhook deliveries by outcome', async () => {
  // A receiver on loopback that fails its first delivery and takes the second.
  const statuses = [503, 204];
  const receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(statuses.shift() ?? 204).end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  try {
    const { appId } = await h.newApp('enterprise');
    const owner = (await h.newKey(appId, ['rules:write'])).key;
    const device = (await h.newKey(appId, ['events:ingest'])).key;
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    const created = await h.api(`/v1/apps/${appId}/webhooks`, { method: 'POST', headers: json(owner), body: JSON.stringify({ url, events: ['threat.opened'] }) });
    expect(created.status).toBe(201);
    const worker = new WebhookWorker({ repos: h.deps.repos, clock: h.clock, logger: h.deps.logger, config: h.deps.config });
    const before = await scrape();
    expect((await ingest(h.baseUrl, device, [event(h.clock.now())])).status).toBe(202);
    expect(await worker.runDue()).toBe(1); // refused by the receiver: retried later
    h.clock.advance(31_000);
    expect(await worker.runDue()).toBe(1);
    const after = await scrape();
    const delta = (outcome: string) => sumOf(after, 'shieldgate_webhook_deliveries_total', { outcome }) - sumOf(before, 'shieldgate_webhook_deliveries_total', { outcome });
    expect([delta('retry'), delta('delivered'), delta('given_up')]).toEqual([1, 1, 0]);
  } finally {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  }
});

describe('who may read /metrics', () => {
  it('without METRICS_TOKEN: a direct loopback connection only, never a request a proxy forwarded', async () => {
    expect((await h.api('/metrics')).status).toBe(200);
    const forwarded = await h.api('/metrics', { headers: { 'x-forwarded-for': '203.0.113.9' } });
    expect(forwarded.status).toBe(403);
    expect(forwarded.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect((await h.api('/metrics', { headers: { forwarded: 'for=203.0.113.9' } })).status).toBe(403);
  });

  it('with METRICS_TOKEN: the bearer of that token only, loopback or not', async () => {
    const token = 'mt-0123456789abcdef0123456789abcdef';
    const local = await startHarness({ env: { METRICS_TOKEN: token }, jobs: false });
    try {
      const missing = await local.api('/metrics');
      expect(missing.status).toBe(401);
      expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer /);
      expect(await missing.text()).not.toContain('shieldgate_http_requests_total');
      expect((await local.api('/metrics', { headers: bearer(`${token}x`) })).status).toBe(401);
      const ok = await local.api('/metrics', { headers: { ...bearer(token), 'x-forwarded-for': '203.0.113.9' } });
      expect(ok.status).toBe(200);
      expect(await ok.text()).toContain('shieldgate_http_requests_total');
    } finally {
      await local.close();
    }
  });
});
