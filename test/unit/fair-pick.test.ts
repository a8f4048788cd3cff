// Protects: webhook senders share lanes by service (src/webhooks/fair-pick.ts): the app with the least service first,
// then its webhook with the least, then the oldest delivery; a claim counts as service for one minute only.
import { RecentClaims, takeFairest, appKey, runningCounts } from '../../src/webhooks/fair-pick';
import type { DeliveryCandidate } from '../../src/data/webhook-deliveries-repo';

const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
const d = (id: string, appId: string, webhookId: string, s: number): DeliveryCandidate => ({ _id: id, appId, webhookId, nextAttemptAt: at(s) });

it('counts a claim for one minute, then forgets it', () => {
  const recent = new RecentClaims();
  const t0 = at(0).getTime();
  recent.add('app_a', 'whk_1', t0);
  recent.add('app_a', 'whk_1', t0 + 30_000);
  expect(recent.count(appKey('app_a'), t0 + 30_000)).toBe(2);
  expect(recent.count(appKey('app_a'), t0 + 65_000)).toBe(1);
  expect(recent.count(appKey('app_a'), t0 + 95_000)).toBe(0);
});

it('takes the app with the least service first, then its least-served webhook, then the oldest; ties to the oldest', () => {
  const recent = new RecentClaims();
  const now = at(100).getTime();
  const pool = [d('a1', 'app_a', 'whk_a1', 1), d('a2', 'app_a', 'whk_a2', 2), d('a3', 'app_a', 'whk_a1', 3), d('b1', 'app_b', 'whk_b', 4)];
  const inFlight = runningCounts([d('x', 'app_a', 'whk_a1', 0)]);
  // app_a has an attempt in flight, app_b none: app_b's newer delivery first.
  expect(takeFairest(pool, inFlight, recent, now)?._id).toBe('b1');
  recent.add('app_b', 'whk_b', now);
  // Both apps at one: the oldest, of app_a; its webhook whk_a1 is busy, whk_a2 is not.
  expect(takeFairest(pool, inFlight, recent, now)?._id).toBe('a2');
  recent.add('app_a', 'whk_a2', now);
  expect(takeFairest(pool, inFlight, recent, now)?._id).toBe('a1');
  expect(takeFairest(pool, inFlight, recent, now)?._id).toBe('a3');
  expect(takeFairest(pool, inFlight, recent, now)).toBeUndefined();
});
