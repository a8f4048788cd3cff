import { existsSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { StaticAnalysis } from '../static/analyze-package';
import { incompleteFinding, type IncompleteCause } from '../static/package/incomplete';
import type { Platform } from '../model/types';
import type { WorkerReply, WorkerRequest } from './messages';

export type IsolationOptions = {
  /** V8 heap (old generation) of a worker, in MB. Buffers are outside it; the entry-size caps of limits.ts bound those. */
  memoryMb: number;
  /** Wall-clock time an analysis may take once its worker has loaded. */
  deadlineMs: number;
  /** Most analyses running at once in this process. */
  workers: number;
};

/** Time a worker may take to load its code; past it the worker is stopped and the job retried (not a verdict). */
const LOAD_TIMEOUT_MS = 30_000;

/** Told the package's name and version as soon as the analysis has read them (AnalyzeOptions.onTarget). */
export type TargetListener = (target: StaticAnalysis['target']) => void;

/** Thrown when no worker could be started or it failed while loading: the service's fault, so the job is retried. */
export class WorkerStartError extends Error {}
/** The analysis was given up before it started: its `signal` aborted while it waited for a slot, or `onStart` said so. */
export class AnalysisNotStarted extends Error {}

/**
 * Runs static analysis off the service's event loop: each package is analysed in a fresh worker thread with a heap
 * limit and a wall-clock deadline, so a hostile package can stall or exhaust only its own worker. A worker that runs
 * out of memory, passes its deadline or dies is terminated, and its analysis ends at once with a `scan.incomplete`
 * finding naming the limit: a package that breaks a worker gets a verdict, never a retry. A fresh worker per package
 * also means nothing a package did survives into the next analysis; starting one costs tens of milliseconds.
 */
export class ScanWorkers {
  private running = 0;
  private aloneWaiting = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly options: IsolationOptions) {}

  /**
   * Runs one analysis in a worker of its own. `alone`: with no other analysis in this process, before or during it
   * (a package whose analysis the process once died in is tried again alone, so that a second death is its own).
   * `signal`: aborted while the analysis waits for a slot, it gives up at once with AnalysisNotStarted (a job readied
   * ahead, handed back when its process stops, should not wait for the analysis running first).
   */
  async analyze(
    filePath: string,
    platform: Platform,
    now: Date,
    { alone = false, onStart, onEnd, onTarget, signal }: { alone?: boolean; onStart?: () => Promise<void>; onEnd?: () => Promise<void>; onTarget?: TargetListener; signal?: AbortSignal } = {},
  ): Promise<StaticAnalysis> {
    const slots = alone ? this.options.workers : 1;
    await this.slot(slots, signal);
    try {
      await onStart?.(); // once it has its slot: waiting for one is not analysing
      return await this.runWorker({ filePath, platform, nowMs: now.getTime() }, onTarget);
    } finally {
      // Before the slot goes to the next analysis: nothing that runs after this one is laid at its door.
      await onEnd?.().catch(() => undefined);
      this.running -= slots;
      for (const wake of this.waiting.splice(0)) wake();
    }
  }

  /** One analysis in a worker thread of its own (a seam: tests make a worker that cannot start). */
  protected runWorker(request: WorkerRequest, onTarget?: TargetListener): Promise<StaticAnalysis> {
    return runOne(request, this.options, onTarget);
  }

  /** Takes `slots` worker slots; while an analysis waits to run alone, no other starts first (it would wait forever). */
  private async slot(slots: number, signal?: AbortSignal): Promise<void> {
    const alone = slots > 1;
    if (alone) this.aloneWaiting++;
    try {
      while (this.running + slots > this.options.workers || (!alone && this.aloneWaiting > 0)) {
        if (signal?.aborted) throw new AnalysisNotStarted('given up while waiting for an analysis worker');
        await new Promise<void>((resolve) => {
          this.waiting.push(resolve);
          signal?.addEventListener('abort', () => resolve(), { once: true });
        });
      }
      if (signal?.aborted) throw new AnalysisNotStarted('given up while waiting for an analysis worker');
    } finally {
      if (alone) this.aloneWaiting--;
    }
    this.running += slots;
  }
}

function runOne(request: WorkerRequest, options: IsolationOptions, onTarget?: TargetListener): Promise<StaticAnalysis> {
  return new Promise<StaticAnalysis>((resolve, reject) => {
    const worker = startWorker(request, options);
    let started = false;
    let settled = false;
    const verdict = (cause: IncompleteCause) => ({ findings: [incompleteFinding(cause)], target: { name: path.basename(request.filePath), version: null, versionCode: null }, signing: null, inventory: null });
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // Terminated in every case: a worker whose analysis is over holds nothing the service needs.
      void worker.terminate();
      outcome();
    };
    let timer = setTimeout(() => settle(() => reject(new WorkerStartError(`analysis worker did not load within ${LOAD_TIMEOUT_MS} ms`))), LOAD_TIMEOUT_MS);
    worker.on('message', (reply: WorkerReply) => {
      if (reply.type === 'started') {
        started = true;
        clearTimeout(timer);
        timer = setTimeout(() => settle(() => resolve(verdict({ kind: 'deadline', seconds: options.deadlineMs / 1000 }))), options.deadlineMs);
      } else if (reply.type === 'target') {
        if (!settled) onTarget?.(reply.target);
      } else {
        settle(() => resolve(reply.analysis));
      }
    });
    worker.on('error', (err: Error & { code?: string }) => {
      if (!started) return settle(() => reject(new WorkerStartError(`analysis worker failed to load: ${err.message}`)));
      const cause: IncompleteCause = err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? { kind: 'memory', megabytes: options.memoryMb } : { kind: 'crash' };
      settle(() => resolve(verdict(cause)));
    });
    worker.on('exit', () => {
      if (!started) settle(() => reject(new WorkerStartError('analysis worker exited while loading')));
      else settle(() => resolve(verdict({ kind: 'crash' })));
    });
  });
}

/**
 * Compiled (npm start, dist/): the worker is the .js next to this file. From TypeScript source (tsx, or Jest, whose
 * transform does not reach worker threads): the worker registers tsx's CommonJS loader, then loads the .ts entry.
 * tsx is a devDependency, needed only there.
 */
function startWorker(request: WorkerRequest, options: IsolationOptions): Worker {
  const resourceLimits = { maxOldGenerationSizeMb: options.memoryMb, maxYoungGenerationSizeMb: Math.max(4, Math.min(32, Math.floor(options.memoryMb / 8))) };
  const compiled = path.join(__dirname, 'scan-worker.js');
  if (existsSync(compiled)) return new Worker(compiled, { workerData: request, resourceLimits });
  const source = path.join(__dirname, 'scan-worker.ts');
  const loader = require.resolve('tsx/cjs/api');
  const code = `require(${JSON.stringify(loader)}).register(); require(${JSON.stringify(source)});`;
  return new Worker(code, { eval: true, workerData: request, resourceLimits });
}
