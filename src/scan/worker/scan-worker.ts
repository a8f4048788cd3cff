// Entry of an analysis worker thread (see analyze-in-worker.ts): analyses one package and posts the result.
// It reads the package itself from the path it is given, so no package bytes cross the thread boundary.
import { parentPort, workerData } from 'node:worker_threads';
import { analyzePackage } from '../static';
import type { WorkerReply, WorkerRequest } from './messages';

const request = workerData as WorkerRequest;
const port = parentPort!;
// Posted once the analyser's code is loaded: a failure before it is the service's (a broken install), after it the package's.
port.postMessage({ type: 'started' } satisfies WorkerReply);
void analyzePackage(request.filePath, request.platform, { now: new Date(request.nowMs) }).then((analysis) => {
  port.postMessage({ type: 'done', analysis } satisfies WorkerReply);
});
