// Protects: the error model at the REST edge: RFC 9457 problems for every error, 404/405/400/422 as the contract
// lists them per operation, the version header on every response, and masked unexpected errors logged with their id.
import { Writable } from 'node:stream';
import { startHarness, bearer, json, type Harness, readJson } from '../support/harness';

let h: Harness;
let key: string;
let appId: string;
beforeAll(async () => {
  h = await startHarness();
  ({ appId } = await h.newApp());
  ({ key } = await h.newKey(appId, ['builds:read', 'builds:write', 'rules:read', 'rules:write', 'threats:read']));
});
afterAll(async () => h.close());

async function expectProblem(res: Response, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.headers.get('service-api-version')).toBe('1.0.0');
  const body = await readJson(res);
  expect(body).toMatchObject({ type: `https://shieldgate.dev/problems/${code}`, status, code });
  expect(typeof body.title).toBe('string');
  expect(typeof body.detail).toBe('string');
  expect(body.instance).toMatch(/^urn:shieldgate:request:/);
  return body;
}

it('carries Service-Api-Version on success, error and non-API responses', async () => {
  expect((await h.api('/v1/whoami', { headers: bearer(key) })).headers.get('service-api-version')).toBe('1.0.0');
  expect((await h.api('/v1/whoami')).headers.get('service-api-version')).toBe('1.0.0');
  expect((await h.api('/v1/openapi.json')).headers.get('service-api-version')).toBe('1.0.0');
  expect((await h.api('/healthz')).headers.get('service-api-version')).toBe('1.0.0');
});

it('serves the contract it validates against', async () => {
  const res = await h.api('/v1/openapi.json');
  expect(res.status).toBe(200);
  const doc = await readJson(res);
  expect(doc.openapi).toBe('3.1.0');
  expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/whoami', '/v1/builds', '/v1/uploads/{token}', '/v1/auth/oidc']));
});

it('answers an unknown path 404 and a wrong method 405 with Allow', async () => {
  await expectProblem(await h.api('/v1/nothing-here', { headers: bearer(key) }), 404, 'not_found');
  await expectProblem(await h.api('/v2/whoami', { headers: bearer(key) }), 404, 'not_found');
  const res = await h.api('/v1/whoami', { method: 'POST', headers: bearer(key) });
  await expectProblem(res, 405, 'method_not_allowed');
  expect(res.headers.get('allow')).toBe('GET');
});

it('answers malformed JSON 400, and a wrong media type 400 unsupported_media_type on the seed operations (none lists 415)', async () => {
  await expectProblem(await h.api('/v1/builds', { method: 'POST', headers: json(key), body: '{"platform": "android",' }), 400, 'malformed_request');
  await expectProblem(await h.api('/v1/builds', { method: 'POST', headers: { ...bearer(key), 'content-type': 'text/plain' }, body: 'hello' }), 400, 'unsupported_media_type');
  await expectProblem(await h.api('/v1/builds', { method: 'POST', headers: { ...bearer(key), 'content-type': 'application/xml' }, body: '<a/>' }), 400, 'unsupported_media_type');
  await expectProblem(await h.api('/v1/auth/oidc', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'token' }), 400, 'unsupported_media_type');
  const device = (await h.newKey((await h.newApp()).appId, ['attest:verify'])).key;
  await expectProblem(await h.api('/v1/attest/verify', { method: 'POST', headers: { ...bearer(device), 'content-type': 'text/plain' }, body: 'x' }), 400, 'unsupported_media_type');
  // The upload takes raw bytes: a JSON body is the wrong media type, not malformed JSON.
  const upload = await h.api(`/v1/uploads/${'x'.repeat(40)}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{"not":"bytes"' });
  expect(upload.status).toBe(400);
  expect((await readJson(upload)).code).toBe('unsupported_media_type');
  expect(upload.headers.get('ratelimit-limit')).toBeNull();
});

it('answers a body that breaks the schema 422 with pointers where the operation lists 422', async () => {
  const res = await h.api('/v1/builds', {
    method: 'POST',
    headers: json(key),
    body: JSON.stringify({ platform: 'windows', version: '', extra: true, artifact: { sizeBytes: 0, sha256: 'XYZ' } }),
  });
  const body = await expectProblem(res, 422, 'validation_failed');
  const pointers = body.errors.map((e: { pointer: string }) => e.pointer);
  expect(pointers).toEqual(expect.arrayContaining(['/platform', '/version', '/extra', '/artifact/sizeBytes', '/artifact/sha256']));
  for (const e of body.errors) expect(typeof e.message).toBe('string');
});

it('answers schema errors 400 where the operation lists no 422', async () => {
  const res = await h.api(`/v1/apps/${appId}/audit-events?limit=0`, { headers: bearer(key) });
  const body = await expectProblem(res, 400, 'validation_failed');
  expect(body.errors[0].pointer).toBe('/query/limit');
  await expectProblem(await h.api(`/v1/apps/${appId}/audit-events?bogus=1`, { headers: bearer(key) }), 400, 'validation_failed');
});

it('answers a path id that breaks its pattern 404 where the operation lists no 400', async () => {
  await expectProblem(await h.api('/v1/builds/not-a-build-id', { headers: bearer(key) }), 404, 'not_found');
  await expectProblem(await h.api('/v1/scans/scn_!!', { headers: bearer(key) }), 404, 'not_found');
});

it('answers a malformed header 400', async () => {
  const res = await h.api('/v1/builds', {
    method: 'POST',
    headers: { ...json(key), 'idempotency-key': 'bad key with spaces' },
    body: JSON.stringify({ platform: 'android', version: '1.0.0' }),
  });
  const body = await expectProblem(res, 400, 'malformed_request');
  expect(body.errors[0].pointer).toBe('/headers/idempotency-key');
});

it('answers a body over the JSON limit 400, since createBuild lists no 413', async () => {
  const res = await h.api('/v1/builds', { method: 'POST', headers: json(key), body: JSON.stringify({ version: 'x'.repeat(2 * 1024 * 1024) }) });
  const body = await expectProblem(res, 400, 'malformed_request');
  expect(body.detail).toBe('The body is larger than allowed (the limit is 1 MB).');
});

it('answers a body that is not UTF-8 400 instead of storing replacement characters', async () => {
  const { appId: fresh } = await h.newApp();
  const { key: writer } = await h.newKey(fresh, ['builds:write']);
  const bytes = Buffer.concat([Buffer.from('{"platform":"android","version":"1.0.'), Buffer.from([0xff]), Buffer.from('"}')]);
  const res = await h.api('/v1/builds', { method: 'POST', headers: json(writer), body: bytes });
  const body = await expectProblem(res, 400, 'malformed_request');
  expect(body.detail).toBe('The body is not valid UTF-8.');
  expect(await h.deps.db.collection('builds').countDocuments({ appId: fresh })).toBe(0);
  // The same text in valid UTF-8 is taken as sent.
  const good = await h.api('/v1/builds', { method: 'POST', headers: json(writer), body: '{"platform":"android","version":"1.0.\u00e9"}' });
  expect(good.status).toBe(201);
});

it('validates JSON that is not an object, and says when the body is missing', async () => {
  for (const text of ['null', '3', '"build"', '[]']) {
    const res = await h.api('/v1/builds', { method: 'POST', headers: json(key), body: text });
    const body = await expectProblem(res, 422, 'validation_failed');
    expect(body.errors).toEqual([{ pointer: '/', message: 'must be object' }]);
  }
  const empty = await expectProblem(await h.api('/v1/builds', { method: 'POST', headers: json(key) }), 422, 'validation_failed');
  expect(empty.errors).toEqual([{ pointer: '/', message: 'a JSON body is required' }]);
  const exchange = await h.api('/v1/auth/oidc', { method: 'POST', headers: { 'content-type': 'application/json' }, body: 'null' });
  await expectProblem(exchange, 400, 'validation_failed');
});

describe('unexpected errors', () => {
  it('are masked, logged with the request id, and never crash the server', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done(); } });
    const local = await startHarness();
    const { createLogger } = await import('../../src/core/logger');
    (local.deps as { logger: unknown }).logger = createLogger('error', sink);
    const { appId: a } = await local.newApp();
    const k = await local.newKey(a, ['builds:read']);
    // Break a dependency under the server: the next key lookup throws an unexpected driver error.
    const repo = local.deps.repos.apiKeys as unknown as { findById: () => Promise<never> };
    const original = repo.findById;
    repo.findById = async () => { throw new Error('connection reset by database at 10.1.2.3:27017'); };
    try {
      const res = await local.api('/v1/whoami', { headers: bearer(k.key) });
      const body = await expectProblem(res, 500, 'internal_error');
      expect(JSON.stringify(body)).not.toMatch(/10\.1\.2\.3|connection reset|stack|at /);
      const requestId = res.headers.get('x-request-id');
      expect(body.instance).toBe(`urn:shieldgate:request:${requestId}`);
      const logged = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'unexpected error');
      expect(logged).toMatchObject({ requestId, level: 50 });
      expect(lines.join('\n')).not.toContain(k.key.split('_').slice(3).join('_'));
    } finally {
      repo.findById = original;
    }
    expect((await local.api('/v1/whoami', { headers: bearer(k.key) })).status).toBe(200);
    await local.close();
  });
});
