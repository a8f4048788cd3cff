import type { RequestContext } from './context';
import type { FieldError } from '../core/errors';
import { validationFailed } from '../core/errors';
import { DETECTIONS, THREAT_ACTIONS, THREAT_VERDICTS, type ThreatDoc } from '../data/threats-repo';
import { requireDeviceKey } from '../threats/device-principal';
import { hashDeviceId, mergeKey, threatIdFor } from '../threats/merge-key';
import { planWindows } from '../threats/windows';
import { mergeOneKey } from '../threats/merge-one-key';
import { claimRecord, countsClaim, firstWindowDoc, type EventClaim, type PreparedEvent } from '../threats/window-doc';
import type { WindowCache } from '../threats/window-cache';
import type { ThreatMergeDoc } from '../data/threat-merges-repo';
import { claimEventIds } from '../threats/event-claims';
import { notifyIngested } from '../webhooks/enqueue';

export const MAX_BATCH = 100;
/** A device clock may run a little ahead; further than this, an event would sit on top of every list for days. */
export const MAX_FUTURE_SKEW_MS = 10 * 60 * 1000;
/** Devices buffer events while offline, but not for longer than this. */
export const MAX_EVENT_AGE_MS = 30 * 24 * 60 * 60 * 1000;
/** Merge keys whose windows are looked up one by one run this many at a time. */
const SLOW_PATH_CONCURRENCY = 8;

export interface SecurityEventInput {
  detection: string;
  verdict: string;
  confidence: number;
  action: string;
  signals: string[];
  platform?: string | null;
  appVersion?: string | null;
  buildId?: string | null;
  occurredAt: Date;
  deviceId: string;
  eventId?: string | null;
}

const BUILD_ID = /^bld_[A-Za-z0-9_-]{6,40}$/;
const EVENT_ID = /^[A-Za-z0-9_.:-]{8,64}$/;

function oneOf(list: readonly string[], value: unknown): boolean {
  return typeof value === 'string' && list.includes(value);
}

/** The contract's rules per event (the REST layer checks the schema first; GraphQL callers meet them here). */
function eventErrors(e: SecurityEventInput, i: number, now: Date): FieldError[] {
  const at = (field: string, message: string) => ({ pointer: `/events/${i}/${field}`, message });
  const errors: FieldError[] = [];
  if (!oneOf(DETECTIONS, e.detection)) errors.push(at('detection', `must be one of ${DETECTIONS.join(', ')}`));
  if (!oneOf(THREAT_VERDICTS, e.verdict)) errors.push(at('verdict', `must be one of ${THREAT_VERDICTS.join(', ')}`));
  if (!oneOf(THREAT_ACTIONS, e.action)) errors.push(at('action', `must be one of ${THREAT_ACTIONS.join(', ')}`));
  if (!Number.isFinite(e.confidence) || e.confidence < 0 || e.confidence > 1) errors.push(at('confidence', 'must be between 0 and 1'));
  if (!Array.isArray(e.signals) || e.signals.length > 32) errors.push(at('signals', 'must be an array of at most 32 signals'));
  else e.signals.forEach((s, j) => (s.length < 1 || s.length > 64) && errors.push(at(`signals/${j}`, 'must be 1 to 64 characters')));
  if (e.platform != null && e.platform !== 'android' && e.platform !== 'ios') errors.push(at('platform', 'must be android or ios'));
  if (e.appVersion != null && (e.appVersion.length < 1 || e.appVersion.length > 40)) errors.push(at('appVersion', 'must be 1 to 40 characters'));
  if (e.buildId != null && !BUILD_ID.test(e.buildId)) errors.push(at('buildId', 'must be a build id'));
  if (e.eventId != null && (typeof e.eventId !== 'string' || !EVENT_ID.test(e.eventId))) errors.push(at('eventId', 'must be 8 to 64 of A-Z a-z 0-9 _ . : -'));
  if (typeof e.deviceId !== 'string' || e.deviceId.length < 8 || e.deviceId.length > 128) errors.push(at('deviceId', 'must be 8 to 128 characters'));
  const t = e.occurredAt instanceof Date ? e.occurredAt.getTime() : NaN;
  if (Number.isNaN(t)) errors.push(at('occurredAt', 'must be a date-time'));
  else if (t > now.getTime() + MAX_FUTURE_SKEW_MS) errors.push(at('occurredAt', 'must not be more than 10 minutes in the future'));
  else if (t < now.getTime() - MAX_EVENT_AGE_MS) errors.push(at('occurredAt', 'must not be more than 30 days in the past'));
  return errors;
}

function validateBatch(events: SecurityEventInput[], now: Date): void {
  if (events.length < 1 || events.length > MAX_BATCH) throw validationFailed([{ pointer: '/events', message: `must hold 1 to ${MAX_BATCH} events` }]);
  const errors = events.flatMap((e, i) => eventErrors(e, i, now));
  if (errors.length) throw validationFailed(errors);
}

function prepare(appId: string, deviceIdKey: Buffer, e: SecurityEventInput, claim: EventClaim | undefined, attestation: BatchAttestation): PreparedEvent {
  const deviceHash = hashDeviceId(deviceIdKey, appId, e.deviceId);
  const identity = {
    appId,
    deviceHash,
    detection: e.detection as ThreatDoc['detection'],
    verdict: e.verdict as ThreatDoc['verdict'],
    action: e.action as ThreatDoc['action'],
    signals: e.signals,
    platform: (e.platform ?? null) as ThreatDoc['platform'],
    appVersion: e.appVersion ?? null,
    buildId: e.buildId ?? null,
    ...attestation,
  };
  const prepared: PreparedEvent = { ...identity, signals: [...e.signals], key: mergeKey(identity), at: e.occurredAt, confidence: e.confidence };
  if (claim) prepared.claim = claim;
  return prepared;
}

/** A verdict token is about 700 characters; the REST schema allows 4096, GraphQL callers get the same bound here. */
const MAX_VERDICT_TOKEN = 4096;

/** What a batch's verdict token says of its device: attested, and which build, or not attested at all. */
type BatchAttestation = { attested: boolean; attestedBuildId: string | null };

/**
 * The batch is attested when its verdict token verifies: signed by the attestation key set, for this app, not
 * expired, and not `untrusted`. A token that does not verify only leaves the events unattested: a device whose
 * verdict expired must still be able to report what it sees.
 */
async function attestationOfBatch(ctx: RequestContext, appId: string, verdictToken: string | null): Promise<BatchAttestation> {
  const none = { attested: false, attestedBuildId: null };
  if (!verdictToken || verdictToken.length > MAX_VERDICT_TOKEN) return none;
  // A forged token is refused against the cached public keys, without the database read verify() does for the key's status.
  if (!(await ctx.deps.attestKeys.signatureHolds('verdict', verdictToken))) return none;
  const verified = await ctx.deps.attestKeys.verify('verdict', verdictToken);
  const claims = verified?.claims;
  if (!claims || claims.sub !== appId || claims.aud !== appId || claims.verdict === 'untrusted') return none;
  return { attested: true, attestedBuildId: typeof claims.buildId === 'string' ? claims.buildId : null };
}

async function inParallel<T>(items: T[], limit: number, run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await run(items[next++]);
  });
  await Promise.all(workers);
}

/**
 * Which events of the batch this request places: all without an event id, and those whose id it claimed (or whose
 * recent claim it may count again, idempotently). A repeat of an id within the batch, or of one claimed long ago, is
 * a duplicate here already.
 */
async function claimBatch(ctx: RequestContext, appId: string, events: SecurityEventInput[], now: Date) {
  const ids = [...new Set(events.flatMap((e) => (e.eventId ? [e.eventId] : [])))];
  const outcomes = ids.length ? await claimEventIds(ctx.repos.threatEventIds, appId, ids, now) : new Map();
  const seen = new Set<string>();
  const placed: { event: SecurityEventInput; claim?: EventClaim }[] = [];
  let duplicates = 0;
  for (const event of events) {
    if (!event.eventId) {
      placed.push({ event });
      continue;
    }
    const outcome = outcomes.get(event.eventId);
    if (seen.has(event.eventId) || outcome?.kind !== 'count') duplicates++;
    else placed.push({ event, claim: { recordId: outcome.recordId, claimedAt: outcome.claimedAt, fresh: outcome.fresh } });
    seen.add(event.eventId);
  }
  return { placed, duplicates };
}

/**
 * Repeats of recent claims (retries) whose event the first window of its key counts itself (firstWindowDoc). Checked
 * before placing, because placing searches only the newest generations and the first one may lie deeper by now.
 * One point read per merge key, only on the retry path.
 */
async function countedByFirstWindows(ctx: RequestContext, cache: WindowCache, events: PreparedEvent[]): Promise<Set<PreparedEvent>> {
  const counted = new Set<PreparedEvent>();
  const repeats = events.filter((e) => e.claim && !e.claim.fresh);
  const firstWindows = new Map<string, Promise<ThreatDoc | null>>();
  for (const e of repeats) {
    if (firstWindows.has(e.key)) continue;
    const known = cache.get(e.key)?.frontier;
    firstWindows.set(e.key, known?.generation === 0 ? Promise.resolve(known) : ctx.repos.threats.findWindow(e.appId, threatIdFor(e.key, 0)));
  }
  for (const e of repeats) {
    const window = await firstWindows.get(e.key);
    if (window && countsClaim(window, e.claim!)) counted.add(e);
  }
  return counted;
}

/**
 * Ingests a batch of device events (API keys with events:ingest only). Events with an event id are claimed first, all
 * ids of the batch in one insert (event-claims.ts). Events are grouped by merge key and split into windows in memory.
 * A key never seen opens its first window with a plain insert, all such keys of the batch in one insertMany, so the
 * common case costs what a raw insert costs; that window also counts the events whose id this request claimed
 * (firstWindowDoc). Keys that already have windows go through `mergeOneKey`, which opens new windows by insert
 * (derived ids serialize racing openers) and returns merge records; those are inserted together at the end. Events
 * with an id placed there, and retries of recent claims, are counted by a merge record whose id derives from the
 * claim, so claim and count need not be atomic: a retry after a crash between them counts the event, and a retry
 * after success collides on the record or finds the event's tag in its first window. Nothing is ever updated, so
 * every step is atomic on its own.
 */
export async function ingestEvents(ctx: RequestContext, events: SecurityEventInput[], verdictToken: string | null = null): Promise<{ accepted: number; duplicates: number }> {
  const principal = requireDeviceKey(ctx, 'events:ingest');
  const now = ctx.clock.now();
  validateBatch(events, now);
  const attestation = await attestationOfBatch(ctx, principal.appId, verdictToken);
  const claimed = await claimBatch(ctx, principal.appId, events, now);
  const cache = ctx.deps.instance.windows;
  const prepared = claimed.placed.map(({ event, claim }) => prepare(principal.appId, ctx.deps.deviceIdKey, event, claim, attestation));
  const countedBefore = await countedByFirstWindows(ctx, cache, prepared);
  const placed = prepared.filter((e) => !countedBefore.has(e));

  const byKey = new Map<string, PreparedEvent[]>();
  for (const e of placed) byKey.set(e.key, [...(byKey.get(e.key) ?? []), e]);

  const firstWindows: { doc: ThreatDoc; group: PreparedEvent[]; recorded: PreparedEvent[] }[] = [];
  const known: PreparedEvent[][] = [];
  for (const group of byKey.values()) {
    const windows = planWindows(group);
    const seen = cache.get(group[0].key) || cache.isOpening(group[0].key);
    if (seen) known.push(group); // this process has seen the key: no first window to open
    else if (windows.length === 1) firstWindows.push({ ...firstWindowDoc(windows[0].members, windows[0], now), group });
    else known.push(group); // several windows in one batch: rare, so the careful path opens them one by one
  }
  const records: ThreatMergeDoc[] = [];
  const openedWindows: { doc: ThreatDoc; occurrences: number }[] = [];
  let countedByWindows = 0;
  const opened = cache.markOpening(firstWindows.map((w) => w.doc.mergeKey));
  try {
    const taken = await ctx.repos.threats.insertWindows(firstWindows.map((w) => w.doc));
    firstWindows.forEach((w, index) => {
      if (taken.has(index)) return void known.push(w.group);
      cache.remember(w.doc.mergeKey, 0, [w.doc]);
      openedWindows.push({ doc: w.doc, occurrences: w.group.length });
      for (const e of w.recorded) records.push(claimRecord(w.doc, { ...e, claim: e.claim! }));
    });
  } finally {
    opened();
  }

  await inParallel(known, SLOW_PATH_CONCURRENCY, async (group) => {
    const merged = await mergeOneKey(ctx.repos, group, now, cache, (doc, occurrences) => openedWindows.push({ doc, occurrences }));
    records.push(...merged.records);
    countedByWindows += merged.counted;
  });
  // A record that existed: this event was counted by an earlier or concurrent attempt under the same claim.
  const recordedBefore = (await ctx.repos.threatMerges.insert(records)).size;
  const byDetection = new Map<string, number>();
  for (const e of placed) byDetection.set(e.detection, (byDetection.get(e.detection) ?? 0) + 1);
  // Alerts are queued after the events are stored and never fail the ingestion (notifyIngested catches and logs).
  await notifyIngested(ctx.deps, principal.appId, openedWindows, byDetection);
  const repeated = countedBefore.size + countedByWindows + recordedBefore;
  return { accepted: placed.length - countedByWindows - recordedBefore, duplicates: claimed.duplicates + repeated };
}
