// Block coverage of the analyser's code, read from V8 through the inspector after each input, so the fuzzer can
// keep the inputs that reach code no earlier input reached (coverage-guided, as libFuzzer does with its counters).
import { Session } from 'node:inspector';

type Range = { startOffset: number; endOffset: number; count: number };
type ScriptCoverage = { url: string; functions: Array<{ ranges: Range[] }> };

/**
 * Only the code that reads untrusted input counts (the analyser, the attestation engines, the CI providers' models);
 * the fuzzer, tsx and Node are not what is being explored.
 */
const COVERED_CODE = ['/src/scan/', '/src/attest/', '/src/oidc/'];

export class CoverageMap {
  private readonly session = new Session();
  /** Functions that ran, by script and start offset, with how many inputs ran them. */
  private readonly functionRuns = new Map<string, number>();
  /** Per function, the blocks V8 has listed as not run at least once, with whether some input since ran them. */
  private readonly blocks = new Map<string, Array<{ start: number; end: number; ran: boolean }>>();

  constructor() {
    this.session.connect();
    this.post('Profiler.enable');
    // Binary block coverage: a run block is folded into its parent, a block that did not run is listed with 0.
    this.post('Profiler.startPreciseCoverage', { callCount: false, detailed: true });
    this.take();
  }

  /** Blocks and functions reached so far. */
  get reached(): number {
    let n = this.functionRuns.size;
    for (const list of this.blocks.values()) n += list.filter((b) => b.ran).length;
    return n;
  }

  /**
   * Reads (and resets) the coverage of the last input; true when it reached a function or a block no earlier input
   * reached. A block is reached when its function ran and no block listed as not run contains it.
   */
  collect(): boolean {
    let grew = false;
    for (const script of this.take()) {
      if (!COVERED_CODE.some((folder) => script.url.includes(folder))) continue;
      for (const fn of script.functions) {
        const [whole, ...inner] = fn.ranges;
        if (!whole || whole.count === 0) continue;
        const fnKey = `${script.url}:${whole.startOffset}`;
        const runsBefore = this.functionRuns.get(fnKey) ?? 0;
        if (runsBefore === 0) grew = true;
        this.functionRuns.set(fnKey, runsBefore + 1);
        const notRun = inner.filter((r) => r.count === 0);
        const known = this.blocks.get(fnKey) ?? [];
        this.blocks.set(fnKey, known);
        for (const r of notRun) {
          // First listed now although the function ran before: an earlier input ran it (or it sat inside a block
          // that did not run, then a little guidance is lost).
          if (!known.some((b) => b.start === r.startOffset && b.end === r.endOffset)) known.push({ start: r.startOffset, end: r.endOffset, ran: runsBefore > 0 });
        }
        for (const b of known) {
          if (!b.ran && !notRun.some((r) => r.startOffset <= b.start && b.end <= r.endOffset)) {
            b.ran = true;
            grew = true;
          }
        }
      }
    }
    return grew;
  }

  private take(): ScriptCoverage[] {
    return (this.post('Profiler.takePreciseCoverage') as { result: ScriptCoverage[] }).result;
  }

  /** The inspector answers a session on its own thread synchronously. */
  private post(method: string, params?: object): unknown {
    let answer: unknown;
    let failure: Error | null = null;
    this.session.post(method, params, (err, res) => {
      failure = err;
      answer = res;
    });
    if (failure) throw failure;
    return answer;
  }
}
