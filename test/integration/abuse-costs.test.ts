// Protects: what one request may cost. threatStats reads every threat of its range to count them: it is priced as
// the dashboards' aggregates are (src/graphql/limits.ts), so a request cannot ask for it 15 times under aliases, and
// the rows it reads are bounded by DASHBOARD_MAX_ROWS like theirs. And on a fresh database, 50 first requests at once
// that need the service's signing key (every build's upload URL is signed), spread over two instances, all succeed.
import { startHarness, json, readJson, type Harness } from '../support/harness';
import { SigningKeysRepo } from '../../src/data/signing-keys-repo';
import { event, gql, ingest, startSecondInstance } from './threats-support';

const MAX_ROWS = 4;

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ jobs: false, env: { DASHBOARD_MAX_ROWS: String(MAX_ROWS) } });
});
afterAll(async () => h.close());

it('signs 50 first requests at once on a fresh database, from two instances, without a 500', async () => {
  expect(await h.deps.db.collection(SigningKeysRepo.collectionName).countDocuments({})).toBe(0);
  const second = await startSecondInstance(h);
  try {
    const { appId } = await h.newApp('enterprise');
    const { key } = await h.newKey(appId, ['builds:write']);
    const answers = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        const res = await fetch(`${i % 2 ? second.baseUrl : h.baseUrl}/v1/builds`, {
          method: 'POST',
          headers: json(key),
          body: JSON.stringify({ platform: 'android', version: `1.0.${i}`, artifact: { sizeBytes: 2, sha256: 'ab'.repeat(32) } }),
        });
        return { status: res.status, body: await readJson(res) };
      }),
    );
    expect(answers.filter((a) => a.status !== 201).map((a) => [a.status, a.body.detail])).toEqual([]);
    expect(answers.every((a) => typeof a.body.artifact.uploadUrl === 'string')).toBe(true);
    const active = await h.deps.db.collection(SigningKeysRepo.collectionName).countDocuments({ status: 'active' });
    expect(active).toBeGreaterThanOrEqual(1);
    expect(active).toBeLessThanOrEqual(2); // at most one first key per instance
  } finally {
    await second.close();
  }
});

describe('threatStats', () => {
  let appId: string;
  let support: string;
  const from = () => new Date(h.clock.now().getTime() - 3_600_000).toISOString();
  const to = () => new Date(h.clock.now().getTime() + 3_600_000).toISOString();
  beforeAll(async () => {
    appId = (await h.newApp('enterprise')).appId;
    support = await h.newStaff('support');
  });

  it('is priced as an aggregate: 15 aliases of it are refused as too costly, one is answered', async () => {
    const field = (i: number) => `s${i}: threatStats(appId: $a, from: $f, to: $t) { day detection threats events devices }`;
    const query = `query Stats($a: ID!, $f: DateTime!, $t: DateTime!) { ${Array.from({ length: 15 }, (_, i) => field(i)).join(' ')} }`;
    const many = await gql(h, support, query, { a: appId, f: from(), t: to() });
    expect(many.body.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_COSTLY');
    const one = await gql(h, support, `query Stats($a: ID!, $f: DateTime!, $t: DateTime!) { ${field(0)} }`, { a: appId, f: from(), t: to() });
    expect(one.body).toEqual({ data: { s0: [] } });
  });

  it('reads at most DASHBOARD_MAX_ROWS threats and merge records, and refuses a range holding more', async () => {
    const device = (await h.newKey(appId, ['events:ingest'])).key;
    const detections = ['hooking', 'emulator', 'debugger', 'root_jailbreak', 'tamper'];
    const events = detections.map((detection, i) => event(h.clock.now(), { detection, deviceId: `device-costs-${i}` }));
    expect((await ingest(h.baseUrl, device, events.slice(0, MAX_ROWS))).status).toBe(202);
    const query = 'query Stats($a: ID!, $f: DateTime!, $t: DateTime!) { threatStats(appId: $a, from: $f, to: $t) { detection threats } }';
    const within = await gql(h, support, query, { a: appId, f: from(), t: to() });
    expect(within.body.errors).toBeUndefined();
    expect(within.body.data.threatStats).toHaveLength(MAX_ROWS);
    expect((await ingest(h.baseUrl, device, events.slice(MAX_ROWS))).status).toBe(202);
    const over = await gql(h, support, query, { a: appId, f: from(), t: to() });
    expect(over.body.errors[0].extensions.code).toBe('validation_failed');
    expect(JSON.stringify(over.body.errors[0])).toContain(`more than ${MAX_ROWS} threats and merge records in range`);
  });
});
