// Protects: every query a repository sends (filter and sort) is one MongoDB can answer from an index that repository
// declares, so production on MongoDB never scans a collection nor sorts one in memory. The test database (FerretDB)
// cannot show MongoDB's plans, so the shapes are read from the source (test/support/query-shapes.ts) and checked
// against the declared indexes. A query that cannot be served is listed here with why that is acceptable, and the
// list must stay exact: an exception that no longer applies fails too.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { extractRepository, servedBy, type QueryShape } from '../support/query-shapes';

const ROOT = path.join(__dirname, '..', '..');
const FILES = [
  ...readdirSync(path.join(ROOT, 'src', 'data'))
    .filter((f) => f.endsWith('-repo.ts'))
    .map((f) => path.join('src', 'data', f)),
];

/** `file method`: why MongoDB may scan or sort there (collections bounded by design, or work for their owners). */
const EXCEPTIONS: Record<string, string> = {
  'signing-keys-repo.ts revokeAllExcept': 'a handful of signing keys, every one but one revoked',
  'scan-jobs-repo.ts claim': 'each $or branch is served by state_turn (state, then turn order, runAfter read from the key) and merge-sorted; this check does not model $or plans',
};

const describeShape = (q: QueryShape) =>
  `${q.op}(eq: ${q.equality.join(',') || '-'}; range: ${q.range.join(',') || '-'}; other: ${q.other.join(',') || '-'}; sort: ${q.sort.map(([f, d]) => `${f}:${d}`).join(',') || '-'})`;

const results = FILES.flatMap((file) => {
  const { indexes, queries } = extractRepository(path.join(ROOT, file));
  return queries.map((q) => ({ where: `${path.basename(file)} ${q.method}`, shape: describeShape(q), index: servedBy(q, indexes) }));
});

it('finds the queries of every repository', () => {
  // The threat repositories' queries, as a check that the extraction follows helpers, variables and optional fields.
  const threats = results.filter((r) => r.where.startsWith('threats-repo.ts list'));
  expect(threats.map((r) => r.shape)).toEqual(
    expect.arrayContaining([
      'find(eq: appId; range: -; other: -; sort: occurredAt:-1,_id:-1)',
      'find(eq: appId,detection,verdict,platform,appVersion,buildId; range: -; other: occurredAt,_id; sort: occurredAt:-1,_id:-1)',
    ]),
  );
  expect(new Set(results.map((r) => r.where.split(' ')[0])).size).toBeGreaterThanOrEqual(14);
});

it('serves every query from a declared index, except the listed ones', () => {
  const unserved = results.filter((r) => r.index === null);
  const unexpected = unserved.filter((r) => !(r.where in EXCEPTIONS)).map((r) => `${r.where}: ${r.shape}`);
  expect(unexpected).toEqual([]);
  const stale = Object.keys(EXCEPTIONS).filter((where) => !unserved.some((r) => r.where === where));
  expect(stale).toEqual([]);
});

it('serves every query of the security-event repositories from an index', () => {
  const threatRepos = results.filter((r) => /^threat/.test(r.where));
  expect(threatRepos.length).toBeGreaterThan(5);
  expect(threatRepos.filter((r) => r.index === null)).toEqual([]);
});

it('serves the dashboards\' aggregate reads from the indexes meant for them (an indexed appId/action and time range)', () => {
  const served = (where: string) => [...new Set(results.filter((r) => r.where === where).map((r) => r.index))];
  expect(served('threats-repo.ts statsRows')).toEqual(['app_time']);
  expect(served('threat-merges-repo.ts statsRows')).toEqual(['app_threat_time']);
  expect(served('builds-repo.ts createdIn')).toEqual(['app_created_id']);
  expect(served('builds-repo.ts findManyForApp')).toEqual(['_id_']);
  expect(served('scans-repo.ts staticScansOf')).toEqual(['app_build_created_engine_id']);
  // Of one app, and of every app: each shape has its own index, neither reads other actions' entries.
  expect(results.filter((r) => r.where === 'audit-repo.ts refusals').map((r) => `${r.shape} -> ${r.index}`)).toEqual([
    'find(eq: action; range: occurredAt; other: -; sort: -) -> action_time',
    'find(eq: action,appId; range: occurredAt; other: -; sort: -) -> app_action_time',
  ]);
  expect(served('apps-repo.ts latestBuilds')).toEqual(['_id_']);
  // The summary it reads is written by _id, each write conditional on the summary already stored.
  for (const write of ['recordLatestBuild', 'initLatestBuild', 'setLatestBuildGrade']) expect(served(`apps-repo.ts ${write}`)).toEqual(['_id_']);
});

it('serves the lookup of the build a device attests (its package and version code) from the index meant for it', () => {
  // Newest first within one app, package and code: the index walk stops at the first scan, whatever the app's history.
  expect(results.filter((r) => r.where === 'scans-repo.ts latestStaticForVersionCode').map((r) => `${r.shape} -> ${r.index}`)).toEqual([
    'find(eq: appId,engine,target.platform,target.name,target.versionCode; range: -; other: -; sort: createdAt:-1,_id:-1) -> app_engine_target_code_created',
  ]);
});

it('serves the staff connections, each filter of builds from an index that starts with it', () => {
  const { indexes, queries } = extractRepository(path.join(ROOT, 'src', 'data', 'builds-repo.ts'));
  const pages = queries.filter((q) => q.method === 'page');
  // Without filters, and with every filter and the keyset position ($or) at once.
  expect(pages.map(describeShape)).toEqual([
    'find(eq: appId; range: -; other: -; sort: createdAt:-1,_id:-1)',
    'find(eq: appId,platform,version,grade; range: -; other: createdAt,_id; sort: createdAt:-1,_id:-1)',
  ]);
  // One filter field at a time: the app's builds of that platform, version or grade, newest first, from its own index
  // (not by walking every build of the app and dropping the others).
  for (const field of ['platform', 'version', 'grade']) {
    const shape: QueryShape = { method: 'page', op: 'find', equality: ['appId', field], range: [], other: [], sort: [['createdAt', -1], ['_id', -1]] };
    expect(servedBy(shape, indexes.filter((i) => i.name === `app_${field}_created_id`))).toBe(`app_${field}_created_id`);
  }
  const served = (file: string, method: string) => results.filter((r) => r.where === `${file} ${method}`).map((r) => r.index);
  for (const [file, method] of [
    ['apps-repo.ts', 'page'],
    ['apps-repo.ts', 'count'],
    ['apps-repo.ts', 'findByIds'],
    ['builds-repo.ts', 'findByIds'],
    ['builds-repo.ts', 'latest'],
    ['builds-repo.ts', 'count'],
    ['scans-repo.ts', 'page'],
    ['scans-repo.ts', 'listForBuilds'],
    ['scans-repo.ts', 'findByIds'],
    ['api-keys-repo.ts', 'page'],
    ['oidc-rules-repo.ts', 'page'],
    ['oidc-rules-repo.ts', 'findById'],
    ['audit-repo.ts', 'findById'],
  ]) {
    expect({ [`${file} ${method}`]: served(file, method).length > 0 && served(file, method).every((i) => i !== null) }).toEqual({ [`${file} ${method}`]: true });
  }
});

it('serves the webhook queue\'s fair claims and per-app cap from the indexes meant for them', () => {
  const served = (method: string) => [...new Set(results.filter((r) => r.where === `webhook-deliveries-repo.ts ${method}`).map((r) => r.index))];
  // Both shapes (any app, and other apps than those served lately) walk the due deliveries in order.
  expect(served('dueCandidates')).toEqual(['status_next']);
  expect(results.filter((r) => r.where === 'webhook-deliveries-repo.ts dueCandidates').length).toBe(2);
  expect(served('claimById')).toEqual(['_id_']);
  expect(served('inFlight')).toEqual(['status_lease']);
  expect(served('overCap')).toEqual(['app_status_created']);
  expect(served('drop')).toEqual(['_id_']);
  expect(served('deleteOlderThan')).toEqual(['created', '_id_']);
});
