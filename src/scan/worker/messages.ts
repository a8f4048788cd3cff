import type { StaticAnalysis } from '../static';
import type { Platform } from '../model/types';

/** What an analysis worker is started with (its workerData). */
export type WorkerRequest = { filePath: string; platform: Platform; nowMs: number };

/** What an analysis worker posts back: `started` once loaded, then `done` with the analysis. */
export type WorkerReply = { type: 'started' } | { type: 'done'; analysis: StaticAnalysis };
