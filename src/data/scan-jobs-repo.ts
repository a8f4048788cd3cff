import os from 'node:os';
import type { Collection, Db } from 'mongodb';
import { ensureIndexes, insertIfAbsent } from './db';
import type { Finding, Platform } from '../scan';
import type { ScanInventory, ScanSigning } from '../scan/model/types';
import type { SignerContinuity } from './signers-repo';

export type ScanJobState = 'queued' | 'running' | 'done' | 'failed';

/** This process, as a job's `holder` names it. */
const HOLDER = `${os.hostname()}:${process.pid}`;

export interface ScanJobDoc {
  _id: string; // job_...
  appId: string;
  buildId: string;
  state: ScanJobState;
  /** Claims so far, including the current one; also the fencing token of the current holder. */
  attempts: number;
  /** While running: the holder owns the job until then; after it, any runner may claim it again. */
  leaseUntil: Date | null;
  /** Who holds the claim (host:pid): which instance an operator looks at for a job that runs long. */
  holder?: string | null;
  /** Not claimable before this (retry back-off). */
  runAfter: Date;
  /**
   * The job's place in the round the apps take (claim sorts on it, then on runAfter): the app's next turn after its
   * unfinished jobs, never earlier than the turn being served when it was queued (ScanJobsRepo.enqueue). Set by the
   * repository; absent on jobs queued before turns, which sort first.
   */
  turn?: number;
  /** Why the last attempt failed; internal only, never shown to clients. */
  lastError: string | null;
  /** Set while the holder's analysis worker runs the package: still set when a claim finds it, the holder died in it. */
  analysingSince?: Date | null;
  /** Attempts whose holder died while the package was being analysed (see JobRunner: MAX_INTERRUPTED_ANALYSES). */
  interruptedAnalyses?: number;
  /**
   * A finished analysis waiting to be compared with its baseline (an earlier-registered build of the app still had
   * its scan to make): kept here so that the attempt that writes the scan does not analyse the package again.
   */
  pendingScan?: PendingScan | null;
  /** Times the job was put back to wait for an earlier build's scan; not attempts (JobRunner counts attempts - deferrals). */
  deferrals?: number;
  /**
   * The build's platform, whether it is a release build, and its place in the app's registration order
   * (buildOrderKey): copied from the build when queued, so that the jobs a scan may have to wait for are one indexed
   * read (jobToWaitFor). Absent on jobs queued before these fields: no scan waits for those.
   */
  platform?: Platform;
  release?: boolean;
  buildOrder?: string;
  /** The package the analysis read, as soon as it has read it (notePackage, defer); absent (never null) until then. */
  package?: string | null;
  /** While deferred: the job it waits for, which wakes it when it ends or turns out to be of another package. */
  waitsFor?: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** What an analysis (and the signing continuity check after it) found, as the scan will hold it. */
export interface PendingScan {
  /** versionCode as the stored scan has it (ScanDoc); absent on analyses kept before the field. */
  target: { platform: Platform; name: string; version: string | null; versionCode?: number | null };
  /** Whether the package named itself (a package that could not be read has no baseline). */
  named: boolean;
  findings: Finding[];
  signing: ScanSigning | null;
  /** What signing continuity concluded; null for a package not analysed, absent on analyses kept before the field. */
  signerContinuity?: SignerContinuity | null;
  inventory: ScanInventory | null;
}

/**
 * A build's place in its app's registration order as one string that sorts like (createdAt, _id): an ISO-8601 time
 * sorts as the time it names, and the id breaks ties.
 */
export function buildOrderKey(build: { _id: string; createdAt: Date }): string {
  return `${build.createdAt.toISOString()}|${build._id}`;
}

/** What a finished analysis waits for: its app, platform and package, and its build's place (buildOrderKey). */
export interface BaselineWait {
  appId: string;
  platform: Platform;
  package: string;
  buildOrder: string;
}

/**
 * Durable static-scan jobs, one per build. Every transition is one conditional single-document update, so several
 * runners (in one process or many) never run one job at the same time and never overwrite each other's outcome.
 */
export class ScanJobsRepo {
  static readonly collectionName = 'scan_jobs';
  private readonly col: Collection<ScanJobDoc>;
  /** This process's runners, told when a write here made a job due (dueListeners). */
  private readonly dueListeners = new Set<() => void>();
  constructor(db: Db) {
    this.col = db.collection<ScanJobDoc>(ScanJobsRepo.collectionName);
  }
  /**
   * Calls `listener` after this process queues a job or wakes waiting ones, so a runner of the process claims it at
   * once rather than at its next poll (a second of an idle worker per upload otherwise). Only a hint: runners of other
   * processes, and jobs that come due by time, are found by polling. Returns the unsubscribe.
   */
  onDue(listener: () => void): () => void {
    this.dueListeners.add(listener);
    return () => void this.dueListeners.delete(listener);
  }
  private due(): void {
    for (const listener of this.dueListeners) listener();
  }
  async ensureIndexes(): Promise<void> {
    await ensureIndexes(this.col, [
      // One job per build: an upload hook that runs twice still queues the analysis once.
      { key: { buildId: 1 }, name: 'build_unique', unique: true },
      // The queue in turn order (claim), and the turn being served: the latest claimed (enqueue).
      { key: { state: 1, turn: 1, runAfter: 1 }, name: 'state_turn' },
      { key: { appId: 1, buildId: 1 }, name: 'app_build' },
      // The jobs being run now, whose apps wait behind every other app's (claim): a handful per instance.
      { key: { state: 1, leaseUntil: 1 }, name: 'state_lease' },
      // An app's unfinished jobs: its last turn (enqueue).
      { key: { appId: 1, state: 1, turn: 1 }, name: 'app_state_turn' },
      // The unfinished release builds of a package, latest-registered first: what a finished analysis waits for.
      { key: { appId: 1, platform: 1, release: 1, package: 1, state: 1, buildOrder: -1 }, name: 'app_baseline_wait' },
      // The jobs waiting for one job (wakeWaiters).
      { key: { waitsFor: 1 }, name: 'waits_for' },
    ]);
  }
  /**
   * Queues the job at its app's next turn; false when the build already has one. Apps take turns as in start-time fair
   * queuing: an app's jobs take consecutive turns, and a job of an app with none unfinished starts at the turn being
   * served (the latest claimed). So a flood of one app takes turns 1..n while another app's job, queued at any point,
   * is next after the job running now; and an app idle for a while gains no credit over the others.
   * Two jobs of one app queued at the same instant may share a turn: claim breaks the tie by runAfter.
   */
  async enqueue(doc: Omit<ScanJobDoc, 'turn'>): Promise<boolean> {
    const [last, served] = await Promise.all([
      this.col.find({ appId: doc.appId, state: { $in: ['queued', 'running'] } }, { projection: { turn: 1 } }).sort({ turn: -1 }).limit(1).next(),
      this.col.find({ state: { $in: ['running', 'done', 'failed'] } }, { projection: { turn: 1 } }).sort({ turn: -1 }).limit(1).next(),
    ]);
    const turn = Math.max(served?.turn ?? 0, last ? (last.turn ?? 0) + 1 : 0);
    const inserted = await insertIfAbsent(this.col, { ...doc, turn });
    if (inserted) this.due();
    return inserted;
  }
  /** The apps with a job being run now (a live lease), on any instance: at most `limit`. */
  async appsRunning(now: Date, limit = 1000): Promise<string[]> {
    const docs = await this.col.find({ state: 'running', leaseUntil: { $gt: now } }, { projection: { appId: 1 } }).limit(limit).toArray();
    return [...new Set(docs.map((d) => d.appId))];
  }
  /**
   * Claims the due job of the earliest turn (see enqueue), the oldest first among equals: a queued one, or a running
   * one whose holder let its lease lapse (it crashed or hung); with `otherThan`, only a job of another app. The filter
   * and the update are one atomic operation, so of two runners asking at once exactly one gets it. A retried or
   * deferred job keeps its turn: it runs as soon as it is due again.
   */
  claim(now: Date, leaseMs: number, otherThan: string[] = [], holder: string = HOLDER): Promise<ScanJobDoc | null> {
    return this.col.findOneAndUpdate(
      {
        $or: [{ state: 'queued' }, { state: 'running', leaseUntil: { $lte: now } }],
        runAfter: { $lte: now },
        ...(otherThan.length ? { appId: { $nin: otherThan } } : {}),
      },
      { $set: { state: 'running', leaseUntil: new Date(now.getTime() + leaseMs), holder, updatedAt: now }, $inc: { attempts: 1 } },
      { sort: { turn: 1, runAfter: 1 }, returnDocument: 'after' },
    );
  }
  /**
   * The transitions below are fenced by `attempts`: a holder whose lease lapsed and whose job was claimed again
   * (attempts moved on) changes nothing, so the newer holder's outcome stands.
   */
  async renew(id: string, attempts: number, now: Date, leaseMs: number): Promise<boolean> {
    const r = await this.col.updateOne(
      { _id: id, state: 'running', attempts },
      { $set: { leaseUntil: new Date(now.getTime() + leaseMs), updatedAt: now } },
    );
    return r.matchedCount === 1;
  }
  /** Marks the holder's analysis as running (`at`) or over (null); fenced like every transition. */
  async markAnalysing(id: string, attempts: number, at: Date | null): Promise<boolean> {
    const r = await this.col.updateOne({ _id: id, state: 'running', attempts }, { $set: { analysingSince: at } });
    return r.matchedCount === 1;
  }
  /** Counts an analysis its holder died in (found by the claim that followed); returns the count. */
  async noteInterrupted(id: string, attempts: number): Promise<number> {
    const doc = await this.col.findOneAndUpdate({ _id: id, state: 'running', attempts }, { $set: { analysingSince: null }, $inc: { interruptedAnalyses: 1 } }, { returnDocument: 'after' });
    return doc?.interruptedAnalyses ?? 0;
  }
  async complete(id: string, attempts: number, now: Date): Promise<boolean> {
    return this.finish(id, attempts, { state: 'done', leaseUntil: null, updatedAt: now });
  }
  async retryLater(id: string, attempts: number, now: Date, runAfter: Date, lastError: string): Promise<boolean> {
    return this.finish(id, attempts, { state: 'queued', leaseUntil: null, runAfter, lastError, updatedAt: now });
  }
  /**
   * Puts back a job this holder claimed but never analysed because its process is stopping, due at once for another
   * instance; fenced. `deferrals` grows with `attempts`, so the claim is not counted against maxAttempts: a job readied
   * ahead on each instance of a rolling deploy would otherwise lose an attempt per instance stopped.
   */
  async handBack(id: string, attempts: number, now: Date): Promise<boolean> {
    const set = { state: 'queued' as const, leaseUntil: null, runAfter: now, lastError: 'handed back: the service was stopping', updatedAt: now, analysingSince: null };
    return this.finishWith(id, attempts, { $set: set, $inc: { deferrals: 1 } });
  }
  async fail(id: string, attempts: number, now: Date, lastError: string): Promise<boolean> {
    return this.finish(id, attempts, { state: 'failed', leaseUntil: null, lastError, updatedAt: now });
  }
  /** Every outcome clears the analysis mark with it, in one write: an unmark lost to an error is never left behind. */
  private async finish(id: string, attempts: number, set: Partial<ScanJobDoc>): Promise<boolean> {
    const r = await this.col.updateOne({ _id: id, state: 'running', attempts }, { $set: { ...set, analysingSince: null } });
    return r.modifiedCount === 1;
  }
  /**
   * Puts the job back in the queue to run at `runAfter`, keeping its finished analysis and the package it read, to wait
   * for `waitsFor`; fenced like every transition. `attempts` keeps growing (it is the fencing token), and `deferrals`
   * with it, so the attempt is not counted.
   */
  async defer(id: string, attempts: number, now: Date, runAfter: Date, pending: PendingScan, waitsFor: string): Promise<boolean> {
    const set = { state: 'queued' as const, leaseUntil: null, runAfter, pendingScan: pending, package: pending.target.name, waitsFor, updatedAt: now, analysingSince: null };
    return this.finishWith(id, attempts, { $set: set, $inc: { deferrals: 1 } });
  }
  /**
   * The job a finished analysis of `wait.package` waits for, if any: the latest-registered unfinished job of a release
   * build of the same app and platform registered before it, of that package or of one not known yet (its analysis
   * has not finished). Only such a build's scan can be the baseline (ScansRepo.baselineFor); no other is waited for.
   */
  async jobToWaitFor(wait: BaselineWait, exceptId: string): Promise<Pick<ScanJobDoc, '_id'> | null> {
    return this.col
      .find(
        {
          appId: wait.appId,
          platform: wait.platform,
          release: true,
          package: { $in: [wait.package, null] },
          state: { $in: ['queued', 'running'] },
          buildOrder: { $lt: wait.buildOrder },
          _id: { $ne: exceptId },
        },
        { projection: { _id: 1 } },
      )
      .sort({ buildOrder: -1 })
      .limit(1)
      .next();
  }
  /**
   * Makes the jobs waiting for `jobId` due now: when it ends (its scan, a baseline, may exist now), or, with
   * `otherThan`, those waiting for another package than the one its analysis read (it is no baseline of theirs).
   */
  async wakeWaiters(jobId: string, now: Date, otherThan?: string): Promise<number> {
    const filter = { waitsFor: jobId, state: 'queued' as const, ...(otherThan !== undefined ? { package: { $ne: otherThan } } : {}) };
    const r = await this.col.updateMany(filter, { $set: { runAfter: now, waitsFor: null } });
    if (r.modifiedCount > 0) this.due();
    return r.modifiedCount;
  }
  /** Makes a waiting job due now (it looked again after deferring and found another job to wait for, or none). */
  async wake(id: string, now: Date): Promise<void> {
    const r = await this.col.updateOne({ _id: id, state: 'queued' }, { $set: { runAfter: now, waitsFor: null } });
    if (r.modifiedCount > 0) this.due();
  }
  /** Records the package the holder's analysis has read (long before a large package's analysis ends); fenced. */
  async notePackage(id: string, attempts: number, pkg: string): Promise<boolean> {
    const r = await this.col.updateOne({ _id: id, state: 'running', attempts }, { $set: { package: pkg } });
    return r.matchedCount === 1;
  }
  private async finishWith(id: string, attempts: number, update: { $set: Partial<ScanJobDoc>; $inc: Partial<Record<'deferrals', number>> }): Promise<boolean> {
    const r = await this.col.updateOne({ _id: id, state: 'running', attempts }, update);
    return r.modifiedCount === 1;
  }
  findByBuild(appId: string, buildId: string): Promise<ScanJobDoc | null> {
    return this.col.findOne({ appId, buildId });
  }
}
