import { createHash } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Deps } from '../../src/core/deps';
import { isAppPrincipal, type AppPrincipal } from '../../src/auth/principal';
import type { StoredResponse } from '../../src/data/idempotency-repo';
import { buildProblem, sendProblem } from '../../src/http/problem';
import { requestState } from '../../src/http/request-state';
import type { OperationInfo } from '../support/spec';
import { pathParams } from '../support/request';
import { replayable, storable } from '../support/stored-answers';

const LEASE_MS = 60_000;
const WINDOW_MS = 24 * 60 * 60 * 1000;
const REPLAYED_HEADERS = ['content-type', 'location'];
/** What a request meeting a key still held is asked to wait: about what a held request takes. */
const IN_PROGRESS_RETRY_AFTER_S = 1;

/** Canonical JSON (sorted keys): the same body in another key order is the same body. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * Outcomes worth replaying: not 5xx (the retry runs again), nor answers that depend on a passing state, nor 401/403
 * (they describe the credential, not the operation: stored, they would refuse the key's rightful owner for a day).
 */
function worthStoring(status: number): boolean {
  return status < 500 && status !== 401 && status !== 403 && status !== 409 && status !== 422 && status !== 429;
}

/**
 * Authorization comes before the key: a credential that may not perform the operation (a scope of its security
 * requirement missing, or another app's path) never claims, replays or stores a key. The request goes on without
 * the key and the service answers it 403/404 as it would any other.
 */
export function mayPerform(principal: AppPrincipal, op: OperationInfo, pathAppId: string | undefined): boolean {
  if (!op.scopes.every((scope) => (principal.scopes as string[]).includes(scope))) return false;
  return !op.appInPath || pathAppId === principal.appId;
}

/**
 * Idempotency-Key (docs/contract.md, "Idempotency"): scope (app, operation, key), 24 h. The request holds the key while it runs; a
 * concurrent one gets 409, the same key and body later gets the stored answer with `Idempotent-Replayed: true`,
 * another body 422. Runs after validation, so a request that failed validation never touches a key, and only for a
 * credential allowed to perform the operation (`mayPerform`).
 */
export function idempotency(deps: Deps): RequestHandler {
  return async (req, res, next) => {
    const state = requestState(res);
    const key = req.get('idempotency-key');
    const principal = state.principal;
    if (!key || !state.op?.acceptsIdempotencyKey || !principal || !isAppPrincipal(principal)) return next();
    if (!mayPerform(principal, state.op, pathParams(req).id)) return next();

    const now = deps.clock.now();
    const id = sha256(`${principal.appId}\n${state.op.operationId}\n${key}`);
    const outcome = await deps.repos.idempotency.claim(
      {
        _id: id,
        appId: principal.appId,
        operation: state.op.operationId,
        bodyHash: sha256(canonical(req.body)),
        state: 'in_progress',
        leaseUntil: new Date(now.getTime() + LEASE_MS),
        response: null,
        createdAt: now,
        expiresAt: new Date(now.getTime() + WINDOW_MS),
      },
      now,
    );
    switch (outcome.kind) {
      case 'body_mismatch':
        return sendProblem(req, res, buildProblem('idempotency_key_reused', state.requestId, { detail: 'This Idempotency-Key was used with another body.' }));
      case 'in_progress': {
        // 409 where the operation lists it; verifyAttest lists none, so "retry shortly" is said as 429 with Retry-After.
        const status = state.op.statuses.has(409) ? 409 : 429;
        const detail = 'A request with this Idempotency-Key is still in progress; retry shortly.';
        return sendProblem(req, res, buildProblem('idempotency_in_progress', state.requestId, { status, detail, retryAfter: IN_PROGRESS_RETRY_AFTER_S }));
      }
      case 'replay': {
        for (const [name, value] of Object.entries(outcome.response.headers)) res.setHeader(name, value);
        res.setHeader('Idempotent-Replayed', 'true');
        res.status(outcome.response.status).send(await replayable(deps, outcome.response.body, now));
        return;
      }
      case 'claimed':
        break;
    }

    // Store (or release) the key before the answer leaves: a client retrying the moment it reads the answer must
    // already find the completed record, never a stale in-progress one.
    let settled = false;
    const send = res.send.bind(res);
    res.send = (body?: unknown) => {
      if (settled) return send(body as never);
      settled = true;
      const headers: Record<string, string> = {};
      for (const name of REPLAYED_HEADERS) {
        const value = res.getHeader(name);
        if (value !== undefined) headers[name] = String(value);
      }
      const stored: StoredResponse = { status: res.statusCode, headers, body: storable(Buffer.isBuffer(body) ? body.toString('utf8') : body) };
      const update = worthStoring(stored.status) ? deps.repos.idempotency.complete(id, stored) : deps.repos.idempotency.release(id);
      update
        .catch((err) => state.logger.error({ err }, 'idempotency record update failed'))
        .finally(() => send(body as never));
      return res;
    };
    // A client that disconnects does not release the key: the request still runs to its end and stores its answer,
    // which the retry then receives (a crashed holder blocks only until its lease ends).
    next();
  };
}
