// Protects: the seed's status lists hold (docs/contract.md, "Status codes"). Each operation of the public contract
// (the API specification v1) lists in openapi/v1.yaml exactly the statuses the contract lists for it, plus 500 and 503; the
// runtime guard (src/http/problem.ts, on in every integration test) then refuses to send any other. Operations added by
// docs/contract.md keep their own lists and are only checked to stay within HTTP's error range.
import { operationTable } from '../../rest/support/spec';

/**
 * The "Status codes:" line of each operation of the contract, quoted verbatim from the API specification v1 (section
 * "Endpoints"), keyed by the heading of its section. The parser below reads them as the contract's text says them.
 */
const SEED_STATUS_LINES: Record<string, string> = {
  'POST /v1/auth/oidc': 'Status codes: 200, 400, 401, 429.',
  'GET /v1/whoami': 'No parameters, no body. Response 200: Whoami. Status codes: 200, 401, 429.',
  'POST /v1/builds':
    'Status codes: 201, 400, 401, 403 (scope missing), 409 (for example an idempotent request still in progress), 422 (validation failed, or idempotency key reused with another body), 429.',
  'GET /v1/builds/{id}': 'Status codes: 200, 401, 403, 404, 429.',
  'PUT /v1/uploads/{token}': 'Status codes: 200, 400, 403 (signed URL invalid or expired), 404, 409, 413 (body larger than allowed), 422.',
  'GET /v1/apps/{id}/threats': 'Response 200: ThreatList, newest first. Status codes: 200, 400, 401, 403, 404, 429.',
  'GET /v1/scans/{id}': 'Status codes: 200, 401, 403, 404, 429.',
  'POST /v1/attest/verify': 'Status codes: 200, 400, 401, 403, 422, 429.',
};

/** "Status codes: 201, 400, 403 (scope missing), ..." -> {201, 400, 403, ...}; parenthesised remarks are not codes. */
export function parseStatusLine(line: string): Set<number> {
  const list = line.slice(line.indexOf('Status codes:') + 'Status codes:'.length).replace(/\([^)]*\)/g, '');
  return new Set(list.split(',').map((part) => Number(part.replace(/[.\s]/g, ''))));
}

const ALWAYS_ALLOWED = [500, 503];
const table = operationTable();

it('reads the status lines as the contract writes them', () => {
  expect([...parseStatusLine(SEED_STATUS_LINES['POST /v1/builds'])]).toEqual([201, 400, 401, 403, 409, 422, 429]);
  expect([...parseStatusLine(SEED_STATUS_LINES['GET /v1/whoami'])]).toEqual([200, 401, 429]);
});

it.each(Object.entries(SEED_STATUS_LINES))('%s lists exactly the contract statuses (plus 500 and 503)', (heading, line) => {
  const [method, path] = heading.split(' ');
  const op = table.find((o) => o.method === method.toLowerCase() && o.pathTemplate === path);
  expect(op).toBeDefined();
  const listed = [...op!.statuses].filter((s) => !ALWAYS_ALLOWED.includes(s)).sort();
  expect(listed).toEqual([...parseStatusLine(line)].sort());
});

it('walks every operation of the OpenAPI file: the seed ones are all in the table, the others list real statuses', () => {
  const seedHeadings = new Set(Object.keys(SEED_STATUS_LINES));
  const seedOps = table.filter((o) => seedHeadings.has(`${o.method.toUpperCase()} ${o.pathTemplate}`));
  expect(seedOps).toHaveLength(seedHeadings.size);
  for (const op of table) {
    for (const status of op.statuses) expect(status >= 200 && status <= 599).toBe(true);
    // No seed operation answers 415: a wrong media type there is 400 `unsupported_media_type`.
    if (seedOps.includes(op)) expect(op.statuses.has(415)).toBe(false);
  }
});
