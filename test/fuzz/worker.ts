// Runs one fuzz target inside a worker thread, so a hang can be stopped and a memory blow-up cannot take the
// fuzzer down. Answers each input with its outcome and how much the worker's memory grew while parsing it.
import { parentPort, workerData } from 'node:worker_threads';
import { CoverageMap } from './coverage';
import { TARGETS, isExpectedError } from './targets';
import type { WorkerAnswer, WorkerData } from './harness';

const { target, scratch, coverage: guided } = workerData as WorkerData;
const port = parentPort!;
const coverage = guided ? new CoverageMap() : null;

function used(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

port.on('message', async (input: Uint8Array) => {
  const buf = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  const before = used();
  let answer: WorkerAnswer;
  try {
    await TARGETS[target].run(buf, scratch);
    answer = { kind: 'ok', grewBytes: used() - before };
  } catch (err) {
    const grewBytes = used() - before;
    answer = isExpectedError(err) ? { kind: 'rejected', grewBytes } : { kind: 'crash', grewBytes, symptom: symptom(err) };
  }
  if (coverage) Object.assign(answer, { newCoverage: coverage.collect(), reached: coverage.reached });
  port.postMessage(answer);
});
port.postMessage('ready');

/** The error's type and message, and the first frame in the project's code: what tells two crashes apart. */
function symptom(err: unknown): string {
  if (!(err instanceof Error)) return `non-error thrown: ${String(err).slice(0, 200)}`;
  const frame = (err.stack ?? '').split('\n').find((l) => l.includes('/src/scan/')) ?? '';
  const at = frame.replace(/^.*\/src\/scan\//, 'src/scan/').replace(/\)$/, '');
  return `${err.name}: ${err.message.split('\n')[0].slice(0, 200)}${at ? ` at ${at}` : ''}`;
}
