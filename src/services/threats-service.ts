import type { RequestContext } from './context';
import { appAccess } from '../auth/authorize';
import { validationFailed } from '../core/errors';
import { DETECTIONS, THREAT_VERDICTS, type Detection, type Occurrences, type ThreatDoc, type ThreatQuery } from '../data/threats-repo';
import type { AppDoc } from '../data/apps-repo';
import { FORMER_KINDS, boundDate, keysetConnection, notCounted, pageSize, resumeAfter, type PageArgs, type ThreatConnectionPage } from './pages';

/** Daily statistics cover at most this many days per call (the rows they read: DASHBOARD_MAX_ROWS). */
export const MAX_STATS_DAYS = 92;

export interface ThreatFilterInput {
  detection?: string | null;
  verdict?: string | null;
  platform?: string | null;
  appVersion?: string | null;
  buildId?: string | null;
  from?: Date | null;
  to?: Date | null;
}

export function toQuery(filter: ThreatFilterInput | null | undefined): ThreatQuery {
  const f = filter ?? {};
  const errors = [];
  if (f.detection && !(DETECTIONS as readonly string[]).includes(f.detection)) errors.push({ pointer: '/filter/detection', message: 'unknown detection' });
  if (f.verdict && !(THREAT_VERDICTS as readonly string[]).includes(f.verdict)) errors.push({ pointer: '/filter/verdict', message: 'unknown verdict' });
  if (f.platform && f.platform !== 'android' && f.platform !== 'ios') errors.push({ pointer: '/filter/platform', message: 'must be android or ios' });
  if (f.from && f.to && f.from >= f.to) errors.push({ pointer: '/filter/to', message: 'must be after from' });
  if (errors.length) throw validationFailed(errors);
  const query: ThreatQuery = {};
  if (f.detection) query.detection = f.detection as ThreatQuery['detection'];
  if (f.verdict) query.verdict = f.verdict as ThreatQuery['verdict'];
  if (f.platform) query.platform = f.platform as ThreatQuery['platform'];
  if (f.appVersion) query.appVersion = f.appVersion;
  if (f.buildId) query.buildId = f.buildId;
  if (f.from) query.from = f.from;
  if (f.to) query.to = f.to;
  return query;
}

/** Threats as readers see them: with the occurrences later requests merged into them (count, last time, confidence). */
export async function withMerged(ctx: RequestContext, appId: string, docs: ThreatDoc[]): Promise<ThreatDoc[]> {
  const sums = await ctx.repos.threatMerges.sums(appId, docs);
  return docs.map((d) => {
    // Folded records (older ones, summed by the retention sweep) and the recent ones not folded yet.
    const parts = [d.folded, sums.get(d._id)].filter((p): p is Occurrences => p !== undefined);
    return parts.reduce(
      (t, more) => ({
        ...t,
        count: t.count + more.count,
        lastOccurredAt: more.last > t.lastOccurredAt ? more.last : t.lastOccurredAt,
        confidence: Math.max(t.confidence, more.confidence),
      }),
      d,
    );
  });
}

export interface DailyCount {
  day: string; // YYYY-MM-DD, UTC, of the first occurrence
  detection: Detection;
  threats: number;
  events: number;
  devices: number;
}

/**
 * Per UTC day and detection: merged threats, events (sum of counts) and distinct devices, for a dashboard. Computed by
 * one bounded scan of the range (FerretDB lacks the aggregation operators for it), so the range is bounded too, and
 * the rows it reads by DASHBOARD_MAX_ROWS; priced as an aggregate by /graphql's cost limit (src/graphql/limits.ts).
 */
export async function threatStats(ctx: RequestContext, input: { appId: string; from: Date; to: Date }): Promise<DailyCount[]> {
  await appAccess(ctx, 'threats:read', input.appId, { write: false });
  const span = input.to.getTime() - input.from.getTime();
  if (!(span > 0)) throw validationFailed([{ pointer: '/to', message: 'must be after from' }]);
  if (span > MAX_STATS_DAYS * 86_400_000) throw validationFailed([{ pointer: '/to', message: `the range may span at most ${MAX_STATS_DAYS} days` }]);

  // Threats and merge records together, as the dashboards' aggregates count them (DASHBOARD_MAX_ROWS).
  const cap = ctx.deps.config.dashboards.maxRows;
  const buckets = new Map<string, { day: string; detection: Detection; threats: number; events: number; devices: Set<string> }>();
  const foldedUpTo = new Map<string, number>();
  let seen = 0;
  for await (const row of ctx.repos.threats.statsRows(input.appId, input.from, input.to, cap)) {
    if (++seen > cap) {
      throw validationFailed([{ pointer: '/to', message: `more than ${cap} threats and merge records in range; narrow it` }]);
    }
    const day = row.occurredAt.toISOString().slice(0, 10);
    const id = `${day}|${row.detection}`;
    const bucket = buckets.get(id) ?? { day, detection: row.detection, threats: 0, events: 0, devices: new Set<string>() };
    bucket.threats += 1;
    bucket.events += row.count + (row.folded?.count ?? 0);
    foldedUpTo.set(row._id, row.folded?.upTo.getTime() ?? 0);
    bucket.devices.add(row.deviceHash);
    buckets.set(id, bucket);
  }
  // Occurrences merged by later requests count as events of their threat's day; their devices are already counted.
  for await (const row of ctx.repos.threatMerges.statsRows(input.appId, input.from, input.to, cap - seen)) {
    if (++seen > cap) {
      throw validationFailed([{ pointer: '/to', message: `more than ${cap} threats and merge records in range; narrow it` }]);
    }
    const bucket = buckets.get(`${row.threatOccurredAt.toISOString().slice(0, 10)}|${row.detection}`);
    // A record older than its threat's fold is in the fold already (it waits to be deleted).
    if (bucket && row.createdAt.getTime() >= (foldedUpTo.get(row.threatId) ?? 0)) bucket.events += row.count;
  }
  return [...buckets.values()]
    .sort((a, b) => a.day.localeCompare(b.day) || a.detection.localeCompare(b.detection))
    .map((b) => ({ day: b.day, detection: b.detection, threats: b.threats, events: b.events, devices: b.devices.size }));
}

/**
 * Threats read per page of an export: memory stays at one page whatever the range, and at most EXPORTS_PER_APP and
 * EXPORTS_PER_INSTANCE exports run at once (threats/export-budget.ts).
 */
const EXPORT_PAGE = 500;

/**
 * Every threat of the app first seen in [from, to), newest first, as readers see them (merged occurrences included),
 * read in keyset pages: the caller pulls the next page only when it has written the last one, so memory is one page
 * whatever the range, and the order is as stable as the list's while events arrive or a retention sweep runs.
 */
export async function* exportThreats(ctx: RequestContext, input: { appId: string; from: Date; to: Date }): AsyncGenerator<ThreatDoc> {
  await appAccess(ctx, 'threats:read', input.appId, { write: false });
  if (!(input.from.getTime() < input.to.getTime())) throw validationFailed([{ pointer: '/to', message: 'must be after from' }]);
  // Released when the export ends, fails, or its reader goes away (the caller's loop ends, which returns this).
  const release = ctx.deps.instance.exports.acquire(input.appId);
  try {
    let after: { occurredAt: Date; id: string } | undefined;
    for (;;) {
      const page = await ctx.repos.threats.list(input.appId, { from: input.from, to: input.to }, EXPORT_PAGE, after);
      yield* await withMerged(ctx, input.appId, page.data);
      const last = page.data[page.data.length - 1];
      if (!page.hasMore || !last) return;
      after = { occurredAt: last.occurredAt, id: last._id };
    }
  } finally {
    release();
  }
}

/** Security events of the app, newest first by first occurrence, with the occurrences merged into them since. */
export async function threatsConnection(ctx: RequestContext, app: AppDoc, args: PageArgs & { filter?: ThreatFilterInput | null }): Promise<ThreatConnectionPage> {
  await appAccess(ctx, 'threats:read', app._id, { write: false });
  const size = pageSize(args.first);
  const query = toQuery(args.filter);
  const kind = 'connection:threats';
  const bound = { appId: app._id, ...query, from: boundDate(query.from), to: boundDate(query.to) };
  const after = resumeAfter(ctx, kind, bound, args.after, FORMER_KINDS.threats);
  const docs = await ctx.repos.threats.list(app._id, query, size, after && { occurredAt: after.at, id: after.id });
  const items = await withMerged(ctx, app._id, docs.data);
  return keysetConnection(ctx, { kind, bound, after, items, hasMore: docs.hasMore, timeOf: (d) => d.occurredAt }, notCounted);
}
