// Protects: audit retention (docs/contract.md, "Retention"): entries older than AUDIT_RETENTION_DAYS are removed by a periodic sweep
// (FerretDB has no TTL index), by one instance per period (a lease in MongoDB), in bounded batches; newer entries stay.
import { startHarness, type Harness } from '../support/harness';
import { createAuditRetention } from '../../src/jobs';
import type { AuditDoc } from '../../src/data/audit-repo';

const DAY = 86_400_000;
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ env: { AUDIT_RETENTION_DAYS: '30' }, jobs: false });
});
afterAll(async () => h.close());

function entry(i: number, ageMs: number): AuditDoc {
  return {
    _id: `aud_retention_${String(i).padStart(5, '0')}`,
    appId: 'app_retention',
    org: 'default',
    action: 'oidc.denied',
    occurredAt: new Date(h.clock.now().getTime() - ageMs),
    subject: 'repo:acme/app:ref:refs/heads/main',
    reason: 'not_trusted',
    ruleId: null,
    details: {},
  };
}

it('removes old entries in bounded batches, one instance per period, and keeps the rest', async () => {
  const audit = h.deps.db.collection<AuditDoc>('audit_events');
  const old = Array.from({ length: 250 }, (_, i) => entry(i, 31 * DAY + i * 1000));
  const kept = [entry(1000, 29 * DAY), entry(1001, DAY), entry(1002, 0)];
  await audit.insertMany([...old, ...kept]);

  const periodMs = 3600_000;
  // Two instances, each with its own sweep: only one of them runs in a period.
  const a = createAuditRetention(h.deps, { periodMs, batch: 100, maxBatches: 2 });
  const b = createAuditRetention(h.deps, { periodMs, batch: 100, maxBatches: 2 });
  const [ra, rb] = await Promise.all([a.runOnce(), b.runOnce()]);
  expect([ra, rb].filter((r) => r === null)).toHaveLength(1);
  expect(ra ?? rb).toBe(200); // two batches of 100: the run is bounded
  expect(await audit.countDocuments({})).toBe(53);
  expect(await a.runOnce()).toBeNull(); // still the same period

  h.clock.advance(periodMs);
  expect((await b.runOnce()) ?? (await a.runOnce())).toBe(50);
  const left = await audit.find({}).sort({ _id: 1 }).toArray();
  expect(left.map((d) => d._id)).toEqual(kept.map((d) => d._id));
});
