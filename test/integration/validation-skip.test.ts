import { bearer, readJson, startHarness, type Harness } from '../support/harness';

/**
 * Operations with nothing for the validator to check (no parameter, no body) skip it when answers are not checked
 * (rest/middleware/validate.ts): the answers must be those of the validated path, VALIDATE_RESPONSES on or off.
 */
describe.each(['on', 'off'])('an operation without parameters, VALIDATE_RESPONSES=%s', (validate) => {
  let h: Harness;
  let key: string;
  beforeAll(async () => {
    h = await startHarness({ jobs: false, env: { VALIDATE_RESPONSES: validate } });
    const { appId } = await h.newApp();
    key = (await h.newKey(appId, ['builds:read'])).key;
  });
  afterAll(async () => h.close());

  it('answers whoami', async () => {
    const res = await h.api('/v1/whoami', { headers: bearer(key) });
    expect(res.status).toBe(200);
    expect((await readJson(res)).scopes).toEqual(['builds:read']);
  });
});

// With VALIDATE_RESPONSES on, the 400 becomes a contract-violation 500 (whoami lists no 400): this is checked with it off.
describe('an operation without parameters, given one', () => {
  let h: Harness;
  let key: string;
  beforeAll(async () => {
    h = await startHarness({ jobs: false, env: { VALIDATE_RESPONSES: 'off' } });
    const { appId } = await h.newApp();
    key = (await h.newKey(appId, ['builds:read'])).key;
  });
  afterAll(async () => h.close());

  it('still refuses a query parameter the contract does not list', async () => {
    const res = await h.api('/v1/whoami?x=1', { headers: bearer(key) });
    const body = await readJson(res);
    expect(res.status).toBe(400);
    expect(body.code).toBe('validation_failed');
    expect(body.errors[0].pointer).toBe('/query/x');
  });
});
