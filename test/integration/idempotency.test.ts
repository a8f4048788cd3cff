// Protects: Idempotency-Key records (docs/contract.md, "Idempotency"): one holder among concurrent requests, replay of the stored
// answer, 422 for another body, lease take-over after a crash, and expiry after 24 hours, on the real database; and
// authorization before the key: a credential without the operation's scope, or of another app, never claims,
// replays or stores a key, and 401/403 answers are never stored.
import { startHarness, json, readJson, type Harness } from '../support/harness';
import type { IdempotencyDoc } from '../../src/data/idempotency-repo';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h.close());

function record(id: string, bodyHash: string, now: Date): IdempotencyDoc {
  return {
    _id: id,
    appId: 'app_test',
    operation: 'createBuild',
    bodyHash,
    state: 'in_progress',
    leaseUntil: new Date(now.getTime() + 60_000),
    response: null,
    createdAt: now,
    expiresAt: new Date(now.getTime() + 24 * 3600_000),
  };
}

it('lets exactly one of many concurrent requests hold a key', async () => {
  const now = h.clock.now();
  const outcomes = await Promise.all(Array.from({ length: 30 }, () => h.deps.repos.idempotency.claim(record('k-concurrent', 'b1', now), now)));
  expect(outcomes.filter((o) => o.kind === 'claimed')).toHaveLength(1);
  expect(outcomes.filter((o) => o.kind === 'in_progress')).toHaveLength(29);
});

it('replays the stored answer for the same body and refuses another body', async () => {
  const repo = h.deps.repos.idempotency;
  const now = h.clock.now();
  expect((await repo.claim(record('k-replay', 'b1', now), now)).kind).toBe('claimed');
  await repo.complete('k-replay', { status: 201, headers: { 'content-type': 'application/json' }, body: '{"id":"bld_x"}' });
  expect(await repo.claim(record('k-replay', 'b1', now), now)).toEqual({ kind: 'replay', response: { status: 201, headers: { 'content-type': 'application/json' }, body: '{"id":"bld_x"}' } });
  expect((await repo.claim(record('k-replay', 'b2', now), now)).kind).toBe('body_mismatch');
});

it('takes over an abandoned lease once, and only after it ends', async () => {
  const repo = h.deps.repos.idempotency;
  const start = h.clock.now();
  expect((await repo.claim(record('k-lease', 'b1', start), start)).kind).toBe('claimed');
  const during = new Date(start.getTime() + 59_000);
  expect((await repo.claim(record('k-lease', 'b1', during), during)).kind).toBe('in_progress');
  const after = new Date(start.getTime() + 61_000);
  const takeovers = await Promise.all(Array.from({ length: 10 }, () => repo.claim(record('k-lease', 'b1', after), after)));
  expect(takeovers.filter((o) => o.kind === 'claimed')).toHaveLength(1);
});

it('forgets a key after 24 hours', async () => {
  const repo = h.deps.repos.idempotency;
  const start = h.clock.now();
  await repo.claim(record('k-expiry', 'b1', start), start);
  await repo.complete('k-expiry', { status: 201, headers: {}, body: '{}' });
  const nextDay = new Date(start.getTime() + 24 * 3600_000 + 1);
  expect((await repo.claim(record('k-expiry', 'other-body', nextDay), nextDay)).kind).toBe('claimed');
});

it('releases a claim so the retry runs again (5xx answers are not stored)', async () => {
  const repo = h.deps.repos.idempotency;
  const now = h.clock.now();
  await repo.claim(record('k-release', 'b1', now), now);
  await repo.release('k-release');
  expect((await repo.claim(record('k-release', 'b1', now), now)).kind).toBe('claimed');
});

describe('authorization comes before the key', () => {
  const SHA = 'a'.repeat(64);
  const body = { platform: 'android', version: '7.0', artifact: { sizeBytes: 10, sha256: SHA } };
  const post = (key: string, idempotencyKey: string) =>
    h.api('/v1/builds', { method: 'POST', headers: { ...json(key), 'idempotency-key': idempotencyKey }, body: JSON.stringify(body) });

  async function appWithKeys() {
    const { appId } = await h.newApp('enterprise');
    const device = (await h.newKey(appId, ['attest:verify', 'events:ingest'])).key;
    const ci = (await h.newKey(appId, ['builds:write', 'builds:read'])).key;
    return { appId, device, ci };
  }

  it('does not replay a CI job stored answer (upload URL included) to a device key of the same app', async () => {
    const { device, ci } = await appWithKeys();
    const first = await post(ci, 'ci-run-1001-attempt-1');
    expect(first.status).toBe(201);
    const stolen = await post(device, 'ci-run-1001-attempt-1');
    expect(stolen.status).toBe(403);
    expect(stolen.headers.get('idempotent-replayed')).toBeNull();
    const problem = await readJson(stolen);
    expect(problem.code).toBe('insufficient_scope');
    expect(JSON.stringify(problem)).not.toContain('/v1/uploads/');
    // The rightful owner still gets its replay.
    const again = await post(ci, 'ci-run-1001-attempt-1');
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it('does not let a device key sent first block the CI job: its 403 is neither stored nor holding the key', async () => {
    const { appId, device, ci } = await appWithKeys();
    const squatter = await post(device, 'ci-run-2002-attempt-1');
    expect(squatter.status).toBe(403);
    expect(await h.deps.db.collection('idempotency').countDocuments({ appId })).toBe(0);
    const owner = await post(ci, 'ci-run-2002-attempt-1');
    expect(owner.status).toBe(201);
    expect(owner.headers.get('idempotent-replayed')).toBeNull();
  });

  it('never stores a 401', async () => {
    const { ci } = await appWithKeys();
    const refused = await post(`${ci}x`, 'ci-run-3003-attempt-1');
    expect(refused.status).toBe(401);
    const owner = await post(ci, 'ci-run-3003-attempt-1');
    expect(owner.status).toBe(201);
    expect(owner.headers.get('idempotent-replayed')).toBeNull();
  });

  it('keeps the keys of two apps apart: the same key and body make two builds', async () => {
    const a = await appWithKeys();
    const b = await appWithKeys();
    const fromA = await readJson(await post(a.ci, 'ci-run-4004-attempt-1'));
    const fromB = await post(b.ci, 'ci-run-4004-attempt-1');
    expect(fromB.status).toBe(201);
    expect(fromB.headers.get('idempotent-replayed')).toBeNull();
    const build = await readJson(fromB);
    expect(build.appId).toBe(b.appId);
    expect(build.id).not.toBe(fromA.id);
  });
});
