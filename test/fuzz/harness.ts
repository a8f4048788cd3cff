// Runs fuzz inputs through a target in a worker thread with a deadline and a memory limit, and classifies the
// outcome. Shared by `npm run fuzz`, the smoke test and the regression replay, so all three judge alike.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';

export type WorkerData = { target: string; scratch: string; coverage: boolean };
/** With coverage on: whether the input reached code no earlier one did, and how many functions and blocks are reached. */
type CoverageNote = { newCoverage?: boolean; reached?: number };
export type WorkerAnswer = CoverageNote &
  ({ kind: 'ok' | 'rejected'; grewBytes: number } | { kind: 'crash'; grewBytes: number; symptom: string });

/** ok: the parser returned; rejected: it refused the input with its own error type; the rest are findings. */
export type Outcome = CoverageNote & ({ kind: 'ok' | 'rejected' } | { kind: 'crash' | 'hang' | 'blowup'; symptom: string });

export type Bounds = {
  /** An input still running after this long is a hang. */
  hangMs: number;
  /** Growth of the worker's heap and buffers over one input past this is a blow-up. */
  memoryBytes: number;
};

export const DEFAULT_BOUNDS: Bounds = { hangMs: 1000, memoryBytes: 64 * 1024 * 1024 };

const WORKER_FILE = path.join(__dirname, 'worker.ts');

/** One target's worker; replaced after a hang or a death, so a run goes on. */
export class FuzzWorker {
  private worker: Worker | null = null;
  private ready: Promise<void> | null = null;
  private lastError: (Error & { code?: string }) | null = null;
  private readonly scratchDir = mkdtempSync(path.join(os.tmpdir(), 'shieldgate-fuzz-'));

  constructor(
    readonly target: string,
    readonly bounds: Bounds = DEFAULT_BOUNDS,
    /** Measure block coverage of each input (what `npm run fuzz` steers by; tests need not). */
    readonly coverage = false,
  ) {}

  async run(input: Buffer): Promise<Outcome> {
    const worker = await this.start();
    return new Promise<Outcome>((resolve) => {
      const finish = (o: Outcome, restart: boolean) => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('exit', onExit);
        if (restart) this.discard();
        resolve(o);
      };
      const onMessage = (a: WorkerAnswer) => {
        if (a.grewBytes > this.bounds.memoryBytes) finish({ kind: 'blowup', symptom: `memory grew ${mb(a.grewBytes)} MB parsing ${input.length} bytes` }, true);
        else finish(a.kind === 'crash' ? { kind: 'crash', symptom: a.symptom } : { kind: a.kind, newCoverage: a.newCoverage, reached: a.reached }, false);
      };
      // Out of heap is a blow-up; any other death (an error thrown outside the target's promise) is a crash.
      const onExit = () => {
        const err = this.lastError;
        if (!err || err.code === 'ERR_WORKER_OUT_OF_MEMORY') finish({ kind: 'blowup', symptom: `worker ran out of its ${mb(this.heapLimitBytes())} MB heap parsing ${input.length} bytes` }, true);
        else finish({ kind: 'crash', symptom: `worker died: ${err.name}: ${err.message.split('\n')[0].slice(0, 200)}` }, true);
      };
      this.lastError = null;
      const timer = setTimeout(() => finish({ kind: 'hang', symptom: `no answer within ${this.bounds.hangMs} ms for ${input.length} bytes` }, true), this.bounds.hangMs);
      worker.on('message', onMessage);
      worker.once('exit', onExit);
      worker.postMessage(new Uint8Array(input));
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.discard();
    await worker?.terminate();
    rmSync(this.scratchDir, { recursive: true, force: true });
  }

  /** The worker's old-generation limit: the bound plus room for the parsers' own code and the last inputs. */
  private heapLimitBytes(): number {
    return this.bounds.memoryBytes + 64 * 1024 * 1024;
  }

  private async start(): Promise<Worker> {
    if (!this.worker) {
      const worker = new Worker(WORKER_FILE, {
        workerData: { target: this.target, scratch: path.join(this.scratchDir, 'input.bin'), coverage: this.coverage } satisfies WorkerData,
        // tsx compiles the target and the analyser's TypeScript inside the worker, as it does under `npm run fuzz`.
        execArgv: ['--require', require.resolve('tsx/cjs')],
        resourceLimits: { maxOldGenerationSizeMb: this.heapLimitBytes() / (1024 * 1024) },
      });
      this.worker = worker;
      this.ready = new Promise<void>((resolve, reject) => {
        worker.once('message', () => resolve());
        worker.once('error', reject);
      });
      worker.on('error', (err: Error & { code?: string }) => {
        if (this.worker === worker) this.lastError = err;
      });
    }
    await this.ready;
    return this.worker!;
  }

  private discard(): void {
    void this.worker?.terminate();
    this.worker = null;
    this.ready = null;
  }
}

function mb(bytes: number): number {
  return Math.round(bytes / (1024 * 1024));
}
