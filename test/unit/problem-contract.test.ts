// Protects: the contract guard of problem responses (src/http/problem.ts): with VALIDATE_RESPONSES on, as in every
// integration test, a problem whose status the operation does not list is sent as a 500 naming the breach, so a
// test expecting it fails; listed statuses, 500/503 and responses outside any operation pass unchanged.
import type { Response } from 'express';
import { buildProblem, sendProblem } from '../../src/http/problem';
import { operationTable } from '../../rest/support/spec';
import { createLogger } from '../../src/core/logger';

function fakeResponse(operationId: string | null, checkContract: boolean) {
  const op = operationId ? operationTable().find((o) => o.operationId === operationId) : undefined;
  const sent: { status?: number; body?: string } = {};
  const res = {
    headersSent: false,
    locals: { shieldgate: { requestId: 'r1', logger: createLogger('silent'), op, checkContract } },
    setHeader: () => undefined,
    status(code: number) {
      sent.status = code;
      return this;
    },
    type() {
      return this;
    },
    send(body: string) {
      sent.body = body;
      return this;
    },
  };
  return { res: res as unknown as Response, sent };
}

const req = {} as never;

it('turns a status the operation does not list into a 500 that names it', () => {
  const { res, sent } = fakeResponse('createBuild', true);
  sendProblem(req, res, buildProblem('payload_too_large', 'r1'));
  expect(sent.status).toBe(500);
  expect(JSON.parse(sent.body!)).toMatchObject({ code: 'internal_error', detail: 'contract violation: createBuild lists no 413 (payload_too_large)' });
});

it('passes listed statuses, 500 and 503, and responses outside any operation', () => {
  for (const [operationId, code, status] of [
    ['uploadBuildArtifact', 'payload_too_large', 413],
    ['createBuild', 'validation_failed', 422],
    ['whoami', 'internal_error', 500],
    ['whoami', 'unavailable', 503],
    [null, 'not_found', 404],
  ] as const) {
    const { res, sent } = fakeResponse(operationId, true);
    sendProblem(req, res, buildProblem(code, 'r1'));
    expect({ operationId, status: sent.status }).toEqual({ operationId, status });
  }
});

it('changes nothing when the check is off (production)', () => {
  const { res, sent } = fakeResponse('createBuild', false);
  sendProblem(req, res, buildProblem('payload_too_large', 'r1'));
  expect(sent.status).toBe(413);
});
