import type { RequestContext } from './context';
import { appAccess, requireStaff } from '../auth/authorize';
import { notFound, validationFailed, type FieldError } from '../core/errors';
import type { Detection, StatsRow } from '../data/threats-repo';
import type { BuildDoc, Platform } from '../data/builds-repo';
import type { LatestBuildDoc } from '../data/apps-repo';
import { GRADE_BANDS } from '../scan/score';

/**
 * Aggregates for dashboards (per UTC day, per reason, per grade). Each reads rows from an index-shaped find bounded
 * by app (or action) and time range and folds them here: FerretDB, the test database, lacks what a pipeline would
 * need ($dateToString/$dateTrunc to bucket days, $addToSet for distinct devices, $lookup
 * for merge records). Every aggregate reads at most `dashboards.maxRows` rows and refuses beyond, so no query makes
 * the service read a whole collection.
 */

export const MAX_RANGE_DAYS = 92;
const DAY_MS = 86_400_000;
export const DEFAULT_BREAKDOWN_ROWS = 20;
export const MAX_BREAKDOWN_ROWS = 100;
/** The grade of a build that has no static scan yet. */
export const NO_GRADE = 'none';
export const THREAT_DIMENSIONS = ['detection', 'platform', 'appVersion', 'buildId'] as const;
export type ThreatDimension = (typeof THREAT_DIMENSIONS)[number];
/**
 * Builds per read of their static scans: of one app, or of many apps (the filter is then appId $in × buildId $in, whose
 * index bounds MongoDB builds as a product, so that batch stays small).
 */
const SCAN_BATCH_ONE_APP = 500;
const SCAN_BATCH_MANY_APPS = 100;
/** Apps read at once for the latest-grade distribution when they predate their latest-build summary. */
const APP_CONCURRENCY = 8;

export interface DateRange {
  from: Date;
  to: Date;
}

export interface ThreatCounts {
  threats: number;
  events: number;
  devices: number;
}

export interface ThreatTrendPoint extends ThreatCounts {
  day: string;
  detection: Detection;
}

export interface ThreatBreakdownRow extends ThreatCounts {
  detection: Detection | null;
  platform: Platform | null;
  appVersion: string | null;
  buildId: string | null;
  /** The build named by buildId (when grouped by it and the build exists). */
  build: BuildDoc | null;
}

export interface GradeCount {
  grade: string;
  count: number;
}

export interface BuildDay {
  day: string;
  builds: number;
  grades: GradeCount[];
}

export interface RefusalDay {
  day: string;
  reason: string;
  /** The CI provider whose token it was (`unknown`: an issuer no rule trusted). */
  provider: string;
  count: number;
}

const dayOf = (at: Date) => at.toISOString().slice(0, 10);

function checkRange(range: DateRange): void {
  const span = range.to.getTime() - range.from.getTime();
  if (!(span > 0)) throw validationFailed([{ pointer: '/range/to', message: 'must be after range.from' }]);
  if (span > MAX_RANGE_DAYS * DAY_MS) throw validationFailed([{ pointer: '/range', message: `may span at most ${MAX_RANGE_DAYS} days` }]);
}

function tooManyRows(ctx: RequestContext, what: string): never {
  throw validationFailed([{ pointer: '/range', message: `more than ${ctx.deps.config.dashboards.maxRows} ${what} in the range; narrow it` }]);
}


interface ThreatGroup<V> extends Omit<ThreatCounts, 'devices'> {
  values: V;
  devices: Set<string>;
}

/**
 * Threats of the app first seen in the range, grouped by `groupOf` (null: left out), with what later requests merged
 * into them, as threats-service's threatStats counts them: a threat's events are its count, its fold (merge records
 * the retention sweep summed) and its merge records created since that fold. Threats and merge records together are
 * capped at `dashboards.maxRows`.
 */
async function groupThreats<V>(ctx: RequestContext, appId: string, range: DateRange, groupOf: (row: StatsRow) => { key: string; values: V } | null): Promise<ThreatGroup<V>[]> {
  const cap = ctx.deps.config.dashboards.maxRows;
  const groups = new Map<string, ThreatGroup<V>>();
  const ofThreat = new Map<string, { group: ThreatGroup<V>; foldedUpTo: number }>();
  let read = 0;
  for await (const row of ctx.repos.threats.statsRows(appId, range.from, range.to, cap)) {
    if (++read > cap) tooManyRows(ctx, 'threats and merge records');
    const found = groupOf(row);
    if (!found) continue;
    let group = groups.get(found.key);
    if (!group) groups.set(found.key, (group = { values: found.values, threats: 0, events: 0, devices: new Set() }));
    group.threats += 1;
    group.events += row.count + (row.folded?.count ?? 0);
    group.devices.add(row.deviceHash);
    ofThreat.set(row._id, { group, foldedUpTo: row.folded?.upTo.getTime() ?? 0 });
  }
  // Merge records are dated by their threat's first occurrence, so the same range finds every record of those threats.
  for await (const merge of ctx.repos.threatMerges.statsRows(appId, range.from, range.to, cap - read)) {
    if (++read > cap) tooManyRows(ctx, 'threats and merge records');
    const threat = ofThreat.get(merge.threatId);
    // A record older than its threat's fold is in the fold already (it waits to be deleted).
    if (threat && merge.createdAt.getTime() >= threat.foldedUpTo) threat.group.events += merge.count;
  }
  return [...groups.values()];
}

const counts = <V>(g: ThreatGroup<V>): ThreatCounts => ({ threats: g.threats, events: g.events, devices: g.devices.size });

export interface ThreatTrendInput {
  appId: string;
  range: DateRange;
  platform?: Platform | null;
  appVersion?: string | null;
  buildId?: string | null;
}

/** Per UTC day of first occurrence and detection: merged threats, events and distinct devices, optionally narrowed. */
export async function threatTrend(ctx: RequestContext, input: ThreatTrendInput): Promise<ThreatTrendPoint[]> {
  await appAccess(ctx, 'threats:read', input.appId, { write: false });
  checkRange(input.range);
  const { platform, appVersion, buildId } = input;
  const groups = await groupThreats(ctx, input.appId, input.range, (row) => {
    if ((platform && row.platform !== platform) || (appVersion && row.appVersion !== appVersion) || (buildId && row.buildId !== buildId)) return null;
    const day = dayOf(row.occurredAt);
    return { key: `${day}|${row.detection}`, values: { day, detection: row.detection } };
  });
  return groups
    .map((g) => ({ ...g.values, ...counts(g) }))
    .sort((a, b) => a.day.localeCompare(b.day) || a.detection.localeCompare(b.detection));
}

export interface ThreatBreakdownInput {
  appId: string;
  range: DateRange;
  by: readonly ThreatDimension[];
  first?: number | null;
}

function checkBreakdown(input: ThreatBreakdownInput): number {
  const errors: FieldError[] = [];
  input.by.forEach((dimension, i) => {
    if (!(THREAT_DIMENSIONS as readonly string[]).includes(dimension)) errors.push({ pointer: `/by/${i}`, message: `must be one of ${THREAT_DIMENSIONS.join(', ')}` });
    else if (input.by.indexOf(dimension) !== i) errors.push({ pointer: `/by/${i}`, message: `${dimension} is listed twice` });
  });
  const first = input.first ?? DEFAULT_BREAKDOWN_ROWS;
  if (!Number.isInteger(first) || first < 1 || first > MAX_BREAKDOWN_ROWS) errors.push({ pointer: '/first', message: `must be 1 to ${MAX_BREAKDOWN_ROWS}` });
  if (errors.length) throw validationFailed(errors);
  return first;
}

/**
 * Threats first seen in the range grouped by the chosen dimensions (none: one row of totals), biggest first: by
 * threats, then events, then devices, then the dimensions' values (so equal groups keep a stable order).
 */
export async function threatBreakdown(ctx: RequestContext, input: ThreatBreakdownInput): Promise<ThreatBreakdownRow[]> {
  await appAccess(ctx, 'threats:read', input.appId, { write: false });
  checkRange(input.range);
  const first = checkBreakdown(input);
  const by = new Set(input.by);
  const groups = await groupThreats(ctx, input.appId, input.range, (row) => {
    const values = {
      detection: by.has('detection') ? row.detection : null,
      platform: by.has('platform') ? row.platform : null,
      appVersion: by.has('appVersion') ? row.appVersion : null,
      buildId: by.has('buildId') ? row.buildId : null,
    };
    return { key: JSON.stringify(values), values };
  });
  const top = groups
    .map((g) => ({ key: JSON.stringify(g.values), ...g.values, ...counts(g) }))
    .sort((a, b) => b.threats - a.threats || b.events - a.events || b.devices - a.devices || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .slice(0, first);
  const buildIds = [...new Set(top.map((r) => r.buildId).filter((id): id is string => id !== null))];
  // One read for the builds of the page (a row's build is what a dashboard links to).
  const builds = new Map((buildIds.length ? await ctx.repos.builds.findManyForApp(input.appId, buildIds) : []).map((b) => [b._id, b]));
  return top.map(({ key: _key, ...row }) => ({ ...row, build: row.buildId ? (builds.get(row.buildId) ?? null) : null }));
}

/** Best grade first, then `none`; grades the bands do not know (none today) after them, by name. */
function gradeOrder(a: string, b: string): number {
  const rank = (g: string) => {
    const i = GRADE_BANDS.findIndex((band) => band.grade === g);
    return i >= 0 ? i : g === NO_GRADE ? GRADE_BANDS.length : GRADE_BANDS.length + 1;
  };
  return rank(a) - rank(b) || a.localeCompare(b);
}

function gradeCounts(grades: Map<string, number>): GradeCount[] {
  return [...grades].map(([grade, count]) => ({ grade, count })).sort((a, b) => gradeOrder(a.grade, b.grade));
}

/**
 * The grade of each build's newest static scan (by time, then id), read in batches of builds. Builds without a
 * static scan are absent from the answer. A build has one artifact, uploaded once, so one static scan.
 */
async function latestStaticGrades(ctx: RequestContext, builds: { appId: string; id: string }[]): Promise<Map<string, string>> {
  const newest = new Map<string, { grade: string; createdAt: number; id: string }>();
  const size = new Set(builds.map((b) => b.appId)).size > 1 ? SCAN_BATCH_MANY_APPS : SCAN_BATCH_ONE_APP;
  for (let i = 0; i < builds.length; i += size) {
    const batch = builds.slice(i, i + size);
    const scans = await ctx.repos.scans.staticScansOf([...new Set(batch.map((b) => b.appId))], batch.map((b) => b.id));
    for (const scan of scans) {
      const prior = newest.get(scan.buildId);
      const at = scan.createdAt.getTime();
      if (!prior || at > prior.createdAt || (at === prior.createdAt && scan._id > prior.id)) newest.set(scan.buildId, { grade: scan.grade, createdAt: at, id: scan._id });
    }
  }
  return new Map([...newest].map(([buildId, s]) => [buildId, s.grade]));
}

/** Builds registered per UTC day, with the grades of their latest static scans (`none` without one). */
export async function buildTrend(ctx: RequestContext, input: { appId: string; range: DateRange }): Promise<BuildDay[]> {
  await appAccess(ctx, 'builds:read', input.appId, { write: false });
  checkRange(input.range);
  const cap = ctx.deps.config.dashboards.maxRows;
  const builds: { id: string; appId: string; day: string }[] = [];
  for await (const b of ctx.repos.builds.createdIn(input.appId, input.range.from, input.range.to, cap)) {
    if (builds.length >= cap) tooManyRows(ctx, 'builds');
    builds.push({ id: b._id, appId: input.appId, day: dayOf(b.createdAt) });
  }
  const grades = await latestStaticGrades(ctx, builds);
  const days = new Map<string, Map<string, number>>();
  for (const b of builds) {
    const day = days.get(b.day) ?? new Map<string, number>();
    const grade = grades.get(b.id) ?? NO_GRADE;
    day.set(grade, (day.get(grade) ?? 0) + 1);
    days.set(b.day, day);
  }
  return [...days]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([day, g]) => ({ day, builds: [...g.values()].reduce((s, n) => s + n, 0), grades: gradeCounts(g) }));
}

/** Refused OIDC exchanges per UTC day, reason and CI provider: the counts of oidc.denied entries, of one app or (null) of every app. */
export async function refusedExchanges(ctx: RequestContext, input: { appId: string | null; range: DateRange }): Promise<RefusalDay[]> {
  if (input.appId === null) requireStaff(ctx, { write: false });
  else await appAccess(ctx, 'rules:read', input.appId, { write: false });
  checkRange(input.range);
  const cap = ctx.deps.config.dashboards.maxRows;
  const rows = new Map<string, RefusalDay>();
  let read = 0;
  for await (const entry of ctx.repos.audit.refusals(input.appId, input.range.from, input.range.to, cap)) {
    if (++read > cap) tooManyRows(ctx, 'refusal entries');
    const day = dayOf(entry.occurredAt);
    const reason = entry.reason ?? 'unknown';
    const provider = entry.provider ?? 'github'; // entries written before providers existed
    const key = `${day}|${reason}|${provider}`;
    const row = rows.get(key) ?? { day, reason, provider, count: 0 };
    // Entries written before refusals were counted hold no count: each is one refusal.
    row.count += entry.count ?? 1;
    rows.set(key, row);
  }
  return [...rows.values()].sort((a, b) => a.day.localeCompare(b.day) || a.reason.localeCompare(b.reason) || a.provider.localeCompare(b.provider));
}

export interface AttestVerdictDay {
  day: string;
  engine: string;
  verdict: string;
  reason: string;
  count: number;
}

/**
 * Verdicts of the app's real attestation engines per UTC day, engine, verdict and first reason (`none`: trusted), over
 * the days that start in the range: the counts kept when each verdict was given (attest-verdict-counts-repo.ts).
 */
export async function attestVerdicts(ctx: RequestContext, input: { appId: string; range: DateRange }): Promise<AttestVerdictDay[]> {
  await appAccess(ctx, 'rules:read', input.appId, { write: false });
  checkRange(input.range);
  const cap = ctx.deps.config.dashboards.maxRows;
  await ctx.deps.instance.verdictTally.flush(); // what this instance verified a moment ago
  const rows = await ctx.repos.attestVerdictCounts.inRange(input.appId, input.range.from, input.range.to, cap);
  if (rows.length > cap) tooManyRows(ctx, 'verdict counts');
  return rows
    .map((r) => ({ day: dayOf(r.dayStart), engine: r.engine, verdict: r.verdict, reason: r.reason, count: r.count }))
    .sort((a, b) => a.day.localeCompare(b.day) || a.engine.localeCompare(b.engine) || a.verdict.localeCompare(b.verdict) || a.reason.localeCompare(b.reason));
}

/** Runs `work` over `items`, at most `concurrency` at once, answers in the items' order. */
async function mapConcurrently<T, R>(items: T[], concurrency: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}

/**
 * Grade distribution of the latest build (any platform) of each app: the grade of its static scan, or `none`. Apps
 * without builds are not counted. One read of the apps' latest-build summaries (capped at `dashboards.maxApps`); an
 * app that predates the summary is read the old way once and its summary written.
 */
export async function latestGradeDistribution(ctx: RequestContext): Promise<GradeCount[]> {
  requireStaff(ctx, { write: false });
  const max = ctx.deps.config.dashboards.maxApps;
  const apps = await ctx.repos.apps.latestBuilds(max);
  if (apps.length > max) {
    throw validationFailed([{ pointer: '', message: `more than ${max} apps; the distribution visits at most ${max} (DASHBOARD_MAX_APPS)` }]);
  }
  const summaries = apps.map((a) => a.latestBuild).filter((b): b is LatestBuildDoc => !!b);
  const older = apps.filter((a) => a.latestBuild === undefined).map((a) => a._id);
  if (older.length) summaries.push(...(await summarizeOlderApps(ctx, older)).filter((b): b is LatestBuildDoc => b !== null));
  const distribution = new Map<string, number>();
  for (const b of summaries) {
    const grade = b.grade ?? NO_GRADE;
    distribution.set(grade, (distribution.get(grade) ?? 0) + 1);
  }
  return gradeCounts(distribution);
}

/**
 * The latest build of apps created before their summary existed, read one app at a time as before (its newest build,
 * from the app_created_id index, and the grade of that build's static scans), then written onto each app unless a
 * build registered meanwhile wrote it. A static scan stored between the grade read and that write would find no summary
 * to update, so a summary written without a grade has its grade read once more.
 */
async function summarizeOlderApps(ctx: RequestContext, appIds: string[]): Promise<(LatestBuildDoc | null)[]> {
  const builds = await mapConcurrently(appIds, APP_CONCURRENCY, (appId) => ctx.repos.builds.latest(appId, null));
  const found = builds.filter((b): b is BuildDoc => b !== null).map((b) => ({ appId: b.appId, id: b._id }));
  const grades = await latestStaticGrades(ctx, found);
  const summaries = builds.map((b) => (b ? { id: b._id, createdAt: b.createdAt, platform: b.platform, grade: grades.get(b._id) ?? null } : null));
  const written = await mapConcurrently(appIds, APP_CONCURRENCY, (appId, i) => ctx.repos.apps.initLatestBuild(appId, summaries[i]));
  const ungraded = appIds.flatMap((appId, i) => (written[i] && summaries[i] && summaries[i].grade === null ? [{ appId, id: summaries[i].id }] : []));
  if (ungraded.length) {
    const late = await latestStaticGrades(ctx, ungraded);
    const appOf = new Map(ungraded.map((b) => [b.id, b.appId]));
    for (const [buildId, grade] of late) await ctx.repos.apps.setLatestBuildGrade(appOf.get(buildId)!, buildId, grade);
    for (const s of summaries) if (s && late.has(s.id)) s.grade = late.get(s.id)!;
  }
  return summaries;
}
