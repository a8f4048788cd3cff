import type { StaticAnalysis } from '../static/analyze-package';
import type { Platform } from '../model/types';

/** What an analysis worker is started with (its workerData). */
export type WorkerRequest = { filePath: string; platform: Platform; nowMs: number };

/**
 * What an analysis worker posts back: `started` once loaded, `target` once the package has named itself (not for a
 * package that names nothing), then `done` with the analysis.
 */
export type WorkerReply = { type: 'started' } | { type: 'target'; target: StaticAnalysis['target'] } | { type: 'done'; analysis: StaticAnalysis };
