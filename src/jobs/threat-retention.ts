import type { Clock } from '../core/clock';
import type { Logger } from '../core/logger';
import type { Repositories } from '../data/repositories';
import { REPLACE_WITHIN_MS } from '../threats/event-claims';

/**
 * Merge records created this long ago are folded into their threat. It must exceed the longest an ingest can take
 * between reading the clock and inserting its records (their createdAt), plus REPLACE_WITHIN_MS for the repeat of a
 * claimed event id (its record carries the claim's time): a record is never inserted behind a fold.
 */
export const FOLD_AFTER_MS = REPLACE_WITHIN_MS + 20 * 60 * 1000;
/** A fold whose threat was read longer ago than this is abandoned: what it read may be out of date. */
export const FOLD_STALE_MS = 30 * 1000;
/**
 * Records already folded are deleted once the fold is this old. Until then a fold of another instance that read the
 * threat before this fold (at most FOLD_STALE_MS earlier) still finds every record it sums, and a reader between its
 * read of a threat and of its records still finds the records it counts. A fold is renewed only once it is this old,
 * and the renewal deletes what it covered: renewing it on every sweep would keep it young and its records forever.
 */
export const FOLD_GC_AFTER_MS = 5 * 60 * 1000;
/** Folded records one fold deletes at most; the rest go in the next sweeps (the fold is renewed once they are gone). */
export const FOLD_MAX_DELETES = 2_000;
/** Every query of a sweep reads at most this many documents. */
export const SWEEP_BATCH = 200;
/** Batches of one kind per sweep: a sweep ends in bounded time and the next one continues. */
const MAX_BATCHES = 50;
const DAY_MS = 86_400_000;

export interface SweepResult {
  threatsDeleted: number;
  recordsDeleted: number;
  threatsFolded: number;
  claimsDeleted: number;
}

/**
 * One sweep of the security-event collections, safe to run on every instance at once:
 * - threats first seen more than `retentionDays` ago are deleted, then the merge records of such threats (a record
 *   without its threat is read by nobody);
 * - merge records older than FOLD_AFTER_MS are folded into their threat (`folded`, written with $max, so concurrent
 *   folds of the same threat settle on the one that saw the most without a transaction), and deleted later;
 * - expired event-id claims are deleted (MongoDB's TTL index does this itself; FerretDB has none).
 * Deletes and fold writes address one document by _id, so on the embedded database each holds the serializer only for
 * an index lookup and page reads interleave with the sweep. Pages are keyset-paginated on (occurredAt, _id), which
 * deleting other threats or folding counts never moves: no page repeats or skips a threat while a sweep runs.
 */
export async function sweepThreats(repos: Repositories, clock: Clock, retentionDays: number, foldMaxDeletes = FOLD_MAX_DELETES): Promise<SweepResult> {
  const result: SweepResult = { threatsDeleted: 0, recordsDeleted: 0, threatsFolded: 0, claimsDeleted: 0 };
  const now = clock.now();
  const retentionCutoff = new Date(now.getTime() - retentionDays * DAY_MS);

  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    const ids = await repos.threats.idsBefore(retentionCutoff, SWEEP_BATCH);
    for (const id of ids) await repos.threats.deleteById(id);
    result.threatsDeleted += ids.length;
    if (ids.length < SWEEP_BATCH) break;
  }
  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    const ids = await repos.threatMerges.idsOfThreatsBefore(retentionCutoff, SWEEP_BATCH);
    for (const id of ids) await repos.threatMerges.deleteById(id);
    result.recordsDeleted += ids.length;
    if (ids.length < SWEEP_BATCH) break;
  }

  const foldCutoff = new Date(now.getTime() - FOLD_AFTER_MS);
  const folded = new Set<string>();
  let after: { createdAt: Date; id: string } | undefined;
  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    const records = await repos.threatMerges.createdBefore(foldCutoff, SWEEP_BATCH, after);
    for (const r of records) {
      if (folded.has(r.threatId)) continue;
      folded.add(r.threatId);
      const fold = await foldThreat(repos, clock, r.threatId, foldCutoff, foldMaxDeletes);
      result.recordsDeleted += fold.deleted;
      if (fold.folded) result.threatsFolded += 1;
    }
    if (records.length < SWEEP_BATCH) break;
    const last = records[records.length - 1];
    after = { createdAt: last.createdAt, id: last._id };
  }

  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    const ids = await repos.threatEventIds.idsExpired(now, SWEEP_BATCH);
    await repos.threatEventIds.deleteExpired(ids, now);
    result.claimsDeleted += ids.length;
    if (ids.length < SWEEP_BATCH) break;
  }
  return result;
}

/**
 * Sums the threat's records created in [folded.upTo, cutoff) onto its fold and writes the new fold, after deleting
 * the records the previous fold covered. A fold younger than FOLD_GC_AFTER_MS is left as it is. Records are streamed
 * (a threat may have very many); when more than `maxDeletes` are due, this pass only deletes and the fold is
 * renewed by a later one. Returns how many records it deleted and whether it wrote a new fold.
 */
async function foldThreat(repos: Repositories, clock: Clock, threatId: string, cutoff: Date, maxDeletes: number): Promise<{ deleted: number; folded: boolean }> {
  const readAt = clock.now().getTime();
  const threat = await repos.threats.findById(threatId);
  if (!threat) return { deleted: 0, folded: false }; // deleted by retention: its records go with it
  const prior = threat.folded;
  if (prior && readAt - prior.at.getTime() < FOLD_GC_AFTER_MS) return { deleted: 0, folded: false };
  const from = prior?.upTo.getTime() ?? 0;
  let count = prior?.count ?? 0;
  let last = prior?.last ?? threat.lastOccurredAt;
  let confidence = prior?.confidence ?? threat.confidence;
  let deleted = 0;
  for await (const r of repos.threatMerges.ofThreat(threat.appId, threatId)) {
    const created = r.createdAt.getTime();
    if (created < from) {
      // Counted by the prior fold, which is stored and old enough: no reader or fold still sums this record.
      if (deleted === maxDeletes) return { deleted, folded: false };
      await repos.threatMerges.deleteById(r._id);
      deleted += 1;
    } else if (created < cutoff.getTime()) {
      count += r.count;
      if (r.last > last) last = r.last;
      confidence = Math.max(confidence, r.confidence);
    }
  }
  if (cutoff.getTime() <= from || clock.now().getTime() - readAt > FOLD_STALE_MS) return { deleted, folded: false };
  await repos.threats.fold(threatId, { upTo: cutoff, count, last, confidence, at: clock.now() });
  return { deleted, folded: true };
}

/** Runs sweeps every `intervalMs` until the returned function is called (which waits for a running sweep). */
export function startThreatRetention(repos: Repositories, clock: Clock, logger: Logger, retentionDays: number, intervalMs = 60_000): () => Promise<void> {
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  const tick = (): void => {
    running = sweepThreats(repos, clock, retentionDays)
      .then((r) => {
        if (r.threatsDeleted || r.recordsDeleted || r.threatsFolded || r.claimsDeleted) logger.info(r, 'threat retention sweep');
      })
      .catch((error: unknown) => logger.error({ err: error }, 'threat retention sweep failed'))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, intervalMs);
      });
  };
  let timer = setTimeout(tick, intervalMs);
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await running;
  };
}
