// Protects: Idempotency-Key records (CONTRACT.md): one holder among concurrent requests, replay of the stored
// answer, 422 for another body, lease take-over after a crash, and expiry after 24 hours, on the real database.
import { startHarness, type Harness } from '../support/harness';
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
