// Protects: no secret reaches a log line (src/core/logger.ts). Every kind of secret the service handles is logged through
// the real logger at depths 1 to 3, under its usual field name in any letter case and inside error messages and
// strings, and none of it appears in the output; what is not secret still does.
import { createLogger, redactPath } from '../../src/core/logger';

const SECRETS = {
  apiKey: 'svc_live_K3yIdAbCdEfGhIjKlMnO_s3cr3tPartOfTheApiKeyValue0123',
  testKey: 'svc_test_K3yIdAbCdEfGhIjKlMnO_s3cr3tPartOfATestKey456789',
  staffToken: 'stf_StaffIdAbCdEfGhIjK_staffSecretValueQwErTy987654',
  accessToken: 'eyJhbGciOiJFUzI1NiIsImtpZCI6InNrXzEifQ.eyJzdWIiOiJhcHBfMTIzIiwic2NvcGUiOiJidWlsZHM6d3JpdGUifQ.c2lnbmF0dXJlLXBhcnQ',
  uploadToken: 'upl.eyJiIjoiYmxkXzEyMyJ9.U2lnbmF0dXJlT2ZUaGVVcGxvYWQ',
  webhookSecret: 'whsec_c2VjcmV0LXdlYmhvb2stYnl0ZXMtMTIzNDU2Nzg5MA==',
  privateD: 'nVTyXqPz6pG1rS9kVv0wZ7cHsE2fLqJm4bNd8uTiOaQ',
  deviceId: 'device-5f1c2a9e-7b3d-4c8e-9a61-0d2f4e6b8c10',
  cookie: 'session=Zm9vYmFyYmF6cXV4c2Vzc2lvbg',
  password: 'hunter2-but-longer-Pa55word',
};

/** Objects that carry each secret the way code would hold it, keyed in the letter cases clients and libraries use. */
function carriers(): Array<Record<string, unknown>> {
  return [
    { authorization: `Bearer ${SECRETS.apiKey}` },
    { Authorization: `Bearer ${SECRETS.accessToken}` },
    { AUTHORIZATION: `Bearer ${SECRETS.staffToken}` },
    { 'X-Api-Key': SECRETS.testKey },
    { Cookie: SECRETS.cookie },
    { 'set-cookie': [SECRETS.cookie] },
    { token: SECRETS.uploadToken },
    { accessToken: SECRETS.accessToken },
    { uploadUrl: `https://api.example.com/v1/uploads/${SECRETS.uploadToken}` },
    { secret: SECRETS.webhookSecret },
    { privateJwk: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y', d: SECRETS.privateD } },
    { deviceId: SECRETS.deviceId },
    { DeviceId: SECRETS.deviceId },
    { password: SECRETS.password },
    { note: `the client sent ${SECRETS.apiKey} in the body` },
    { url: `/v1/uploads/${SECRETS.uploadToken}?x=1` },
    { err: new Error(`upstream refused Bearer ${SECRETS.staffToken}`) },
    { list: [{ value: SECRETS.webhookSecret }] },
  ];
}

function nest(inner: Record<string, unknown>, depth: number): Record<string, unknown> {
  let value = inner;
  for (let i = 1; i < depth; i++) value = { [`level${i}`]: value };
  return value;
}

function capture() {
  const lines: string[] = [];
  const logger = createLogger('trace', { write: (line: string) => void lines.push(line) });
  return { logger, text: () => lines.join('') };
}

it.each([1, 2, 3])('hides every secret kind at depth %i', (depth) => {
  const { logger, text } = capture();
  for (const carrier of carriers()) {
    logger.info(nest(carrier, depth), 'carrier');
    logger.child({ requestId: 'r1' }).warn({ req: { headers: nest(carrier, depth) } }, 'as headers');
  }
  const out = text();
  expect(out.split('\n').filter(Boolean)).toHaveLength(carriers().length * 2);
  for (const [kind, secret] of Object.entries(SECRETS)) {
    expect({ kind, found: out.includes(secret) }).toEqual({ kind, found: false });
  }
  // Partial leaks count too: no piece of the key or token secrets.
  expect(out).not.toContain('s3cr3tPartOf');
  expect(out).not.toContain('staffSecretValue');
});

it('hides secrets in the message string and in an error logged directly', () => {
  const { logger, text } = capture();
  logger.error(`refused ${SECRETS.apiKey}`);
  logger.error(new Error(`token ${SECRETS.accessToken} expired`), 'failed');
  expect(text()).not.toContain(SECRETS.apiKey);
  expect(text()).not.toContain(SECRETS.accessToken);
  const line = JSON.parse(text().split('\n')[1]);
  expect(line.err).toMatchObject({ type: 'Error', message: 'token [redacted jwt] expired' });
  expect(line.err.stack).toContain('logger-redaction.test.ts');
});

it('keeps what is not secret, and never changes the object it was given', () => {
  const { logger, text } = capture();
  const entry = { operationId: 'createBuild', status: 201, headers: { authorization: `Bearer ${SECRETS.apiKey}`, 'content-type': 'application/json' } };
  logger.info(entry, 'request');
  const line = JSON.parse(text());
  expect(line).toMatchObject({ operationId: 'createBuild', status: 201, headers: { authorization: '[redacted]', 'content-type': 'application/json' }, msg: 'request' });
  expect(entry.headers.authorization).toBe(`Bearer ${SECRETS.apiKey}`);
});

it('stays bounded on deep and circular objects', () => {
  const { logger, text } = capture();
  const circular: Record<string, unknown> = { name: 'loop' };
  circular.self = circular;
  let deep: Record<string, unknown> = { token: SECRETS.apiKey };
  for (let i = 0; i < 5000; i++) deep = { next: deep };
  logger.info({ circular, deep }, 'odd shapes');
  expect(text()).toContain('[circular]');
  expect(text()).toContain('[truncated]');
  expect(text()).not.toContain(SECRETS.apiKey);
});

it('logs at most the first KiB of a path and 8 KiB of a string, so a hostile request cannot make a log line costly', () => {
  const hostilePath = `/${'eyJ-'.repeat(4000)}`;
  expect(redactPath(hostilePath)).toHaveLength(1024 + 3);
  const { logger, text } = capture();
  logger.info({ path: hostilePath, note: `${'x'.repeat(10_000)} ${SECRETS.accessToken}` }, 'request');
  const line = JSON.parse(text());
  expect(line.note).toMatch(/^x{8192}\.\.\.\[\d+ more characters\]$/);
  expect(text()).not.toContain(SECRETS.accessToken);
});

it('still finds a token wherever a non-token character precedes it', () => {
  const { logger, text } = capture();
  for (const prefix of ['Bearer ', 'token=', '"', '/', ':']) logger.info(`${prefix}${SECRETS.accessToken}`);
  expect(text()).not.toContain(SECRETS.accessToken.slice(0, 40));
  expect(text().match(/\[redacted jwt\]/g)).toHaveLength(5);
});
