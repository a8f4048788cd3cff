// Entry of an analysis worker thread (see analyze-in-worker.ts): analyses one package and posts the result.
// It reads the package itself from the path it is given, so no package bytes cross the thread boundary.
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { analyzePackage } from '../static/analyze-package';
import type { WorkerReply, WorkerRequest } from './messages';

/**
 * Niceness of the analysis thread. On Linux a priority set from a thread applies to that thread alone (the service's
 * event loop keeps its own), so when cores are short the API's requests are served before a package's digests, and the
 * analysis takes what is left: at 10 it still gets about a tenth of a contended core, far inside its deadline.
 */
const ANALYSIS_NICENESS = 10;

const request = workerData as WorkerRequest;
try {
  os.setPriority(ANALYSIS_NICENESS);
} catch {
  // Not permitted (or not Linux): the analysis runs at the service's priority, as before.
}
const port = parentPort!;
// Posted once the analyser's code is loaded: a failure before it is the service's (a broken install), after it the package's.
port.postMessage({ type: 'started' } satisfies WorkerReply);
const onTarget = (target: Extract<WorkerReply, { type: 'target' }>['target']) => port.postMessage({ type: 'target', target } satisfies WorkerReply);
void analyzePackage(request.filePath, request.platform, { now: new Date(request.nowMs), onTarget }).then((analysis) => {
  port.postMessage({ type: 'done', analysis } satisfies WorkerReply);
});
