// Protects: trusted documents at /graphql. A persisted query (sha256Hash, no `query`) runs the registered console
// document of that hash; an unknown hash is PERSISTED_QUERY_NOT_FOUND and no request registers one (Apollo's APQ is
// off). With GRAPHQL_TRUSTED_DOCUMENTS=on, support staff run registered documents only; admins keep free text.
import { startHarness, bearer, type Harness, readJson } from '../support/harness';
import { trustedDocuments } from '../../src/generated/console-operations';
import { documentHash } from '../../src/graphql/document-hash';

const registered = trustedDocuments.ConsoleApps;
const freeText = '{ apps(limit: 1) { id } }';

function post(h: Harness, token: string, body: Record<string, unknown>) {
  return h.api('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(token) }, body: JSON.stringify(body) });
}
const byHash = (sha256Hash: string, variables: Record<string, unknown> = {}) => ({
  operationName: 'ConsoleApps',
  variables,
  extensions: { persistedQuery: { version: 1, sha256Hash } },
});

describe('GRAPHQL_TRUSTED_DOCUMENTS=off (default)', () => {
  let h: Harness;
  let support: string;
  beforeAll(async () => {
    h = await startHarness();
    support = await h.newStaff('support');
  });
  afterAll(async () => h.close());

  it('runs a registered document sent by its hash alone', async () => {
    const { appId } = await h.newApp('scale');
    const res = await post(h, support, byHash(registered.sha256Hash));
    expect(res.status).toBe(200);
    const body = await readJson(res);
    expect(body.errors).toBeUndefined();
    expect(body.data.appsConnection.nodes).toEqual(expect.arrayContaining([expect.objectContaining({ id: appId, plan: 'scale' })]));
  });

  it('answers an unknown hash with PERSISTED_QUERY_NOT_FOUND, and never registers a document sent with its hash', async () => {
    const unknown = documentHash(freeText);
    const first = await post(h, support, byHash(unknown));
    expect(first.status).toBe(400);
    expect((await readJson(first)).errors).toEqual([expect.objectContaining({ extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } })]);
    // An APQ client's registration: the text with its hash. It runs (free text is allowed here) ...
    const withText = await post(h, support, { query: freeText, extensions: { persistedQuery: { version: 1, sha256Hash: unknown } } });
    expect((await readJson(withText)).errors).toBeUndefined();
    // ... and registers nothing.
    const again = await post(h, support, byHash(unknown));
    expect((await readJson(again)).errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
  });

  it('refuses a hash that is not the hash of the text sent with it, and malformed persistedQuery extensions', async () => {
    const mismatch = await post(h, support, { query: freeText, extensions: { persistedQuery: { version: 1, sha256Hash: registered.sha256Hash } } });
    expect(mismatch.status).toBe(400);
    expect((await readJson(mismatch)).errors[0].extensions.code).toBe('PERSISTED_QUERY_HASH_MISMATCH');
    for (const persistedQuery of [{ version: 2, sha256Hash: registered.sha256Hash }, { version: 1, sha256Hash: 'ABC' }, { version: 1 }]) {
      const res = await post(h, support, { extensions: { persistedQuery } });
      expect(res.status).toBe(400);
      expect((await readJson(res)).errors[0].extensions.code).toBe('PERSISTED_QUERY_INVALID');
    }
  });

  it('lets support staff send free text', async () => {
    expect((await readJson(await post(h, support, { query: freeText }))).errors).toBeUndefined();
  });
});

describe('GRAPHQL_TRUSTED_DOCUMENTS=on', () => {
  let h: Harness;
  let support: string;
  let admin: string;
  beforeAll(async () => {
    h = await startHarness({ env: { GRAPHQL_TRUSTED_DOCUMENTS: 'on' } });
    support = await h.newStaff('support');
    admin = await h.newStaff('admin');
  });
  afterAll(async () => h.close());

  it('refuses free text from support staff with TRUSTED_DOCUMENT_REQUIRED', async () => {
    const res = await post(h, support, { query: freeText });
    expect(res.status).toBe(403);
    expect((await readJson(res)).errors).toEqual([expect.objectContaining({ extensions: { code: 'TRUSTED_DOCUMENT_REQUIRED' } })]);
    // The registered text with a byte changed is free text.
    const edited = await post(h, support, { query: registered.document.replace('createdAt', 'createdAt ') });
    expect((await readJson(edited)).errors[0].extensions.code).toBe('TRUSTED_DOCUMENT_REQUIRED');
  });

  it('runs registered documents for support staff, by hash or as their exact text', async () => {
    const hashed = await post(h, support, byHash(registered.sha256Hash));
    expect((await readJson(hashed)).errors).toBeUndefined();
    const text = await post(h, support, { query: registered.document, operationName: 'ConsoleApps' });
    expect(text.status).toBe(200);
    expect((await readJson(text)).errors).toBeUndefined();
  });

  it('applies the same rule to GET requests', async () => {
    const get = (params: Record<string, string>) =>
      h.api(`/graphql?${new URLSearchParams(params)}`, { headers: { ...bearer(support), 'apollo-require-preflight': 'true' } });
    const free = await get({ query: freeText });
    expect(free.status).toBe(403);
    expect((await readJson(free)).errors[0].extensions.code).toBe('TRUSTED_DOCUMENT_REQUIRED');
    const hashed = await get({ operationName: 'ConsoleApps', extensions: JSON.stringify({ persistedQuery: { version: 1, sha256Hash: registered.sha256Hash } }) });
    expect(hashed.status).toBe(200);
    expect((await readJson(hashed)).data.appsConnection.nodes).toEqual(expect.any(Array));
  });

  it('lets admins explore with free text (Apollo Sandbox)', async () => {
    const res = await post(h, admin, { query: '{ __schema { queryType { name } } }' });
    expect(await readJson(res)).toEqual({ data: { __schema: { queryType: { name: 'Query' } } } });
  });
});
