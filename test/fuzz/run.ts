// `npm run fuzz [-- --seconds 60] [--only binary-xml,pkcs7,apk-differential] [--seed 42] [--blind] [--mutants N]`:
// mutates the real seeds of every parser for a set time each, in a worker with a deadline and a memory bound, keeping as new seeds the inputs
// that reach code of the analyser no earlier input reached (V8 block coverage), and keeps each crash, hang (over
// 1 s) or blow-up (over 64 MB) under test/fuzz/regressions/<target>/ for the unit tests to replay. Then, unless
// --only leaves it out, the APK signature differential against apksig (apk-differential.ts, --mutants N) under the
// same seed; a disagreement there makes the run fail.
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { FuzzWorker, type Outcome } from './harness';
import { DEFAULT_MUTANTS, apkDifferential } from './apk-differential';
import { applyMutation, mutation } from './mutate';
import { findingKey, listRegressions, saveRegression } from './regressions';
import { loadSeeds } from './seeds';
import { TARGETS } from './targets';

/** A file where new findings are also listed, one line each, for whoever fixes the parsers (optional). */
const FINDINGS_LOG = process.env.FUZZ_FINDINGS_LOG ?? '';

/** --blind: mutate the seeds only, without coverage feedback (to compare, or for the most executions per second). */
let blind = false;

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

type Tally = { target: string; execs: number; seconds: number; ok: number; rejected: number; found: string[]; corpus: number; reached: number };

/** Inputs kept for reaching new code, per target: enough to steer, few enough that each is mutated often. */
const MAX_CORPUS = 2000;

async function fuzzTarget(target: string, seeds: Buffer[], seconds: number, seed: number, known: Set<string>): Promise<Tally> {
  const worker = new FuzzWorker(target, undefined, !blind);
  // The corpus the mutations start from: the real seeds, then every input that reached new code.
  const corpus = [...seeds];
  const tally: Tally = { target, execs: 0, seconds: 0, ok: 0, rejected: 0, found: [], corpus: 0, reached: 0 };
  const record = async (input: Buffer, result: Outcome) => {
    tally.execs++;
    tally.reached = Math.max(tally.reached, result.reached ?? 0);
    if (result.kind === 'ok' || result.kind === 'rejected') {
      tally[result.kind]++;
      if (result.newCoverage && corpus.length < MAX_CORPUS) corpus.push(input);
      return;
    }
    const outcome = result as Extract<Outcome, { symptom: string }>;
    // A hang is confirmed on a fresh worker: on a shared machine one slow run is not yet a bug.
    if (outcome.kind === 'hang' && (await worker.run(input)).kind !== 'hang') return;
    const key = findingKey(outcome.kind, outcome.symptom);
    if (known.has(key)) return;
    known.add(key);
    const file = saveRegression(target, outcome.kind, input, outcome.symptom);
    const line = `${outcome.kind}: ${outcome.symptom} (${path.relative(process.cwd(), file)})`;
    tally.found.push(line);
    console.log(`  ${target} ${line}`);
    if (FINDINGS_LOG) {
      appendFileSync(FINDINGS_LOG, `- ${target} | ${path.relative(process.cwd(), file)} | ${outcome.kind}: ${outcome.symptom}\n`);
    }
  };
  const started = Date.now();
  try {
    for (const s of seeds) await record(s, await worker.run(s));
    // fast-check stops at the time limit without waiting for the input in flight; it is awaited below, so the
    // worker is never stopped in the middle of an input (which would look like a death).
    let inFlight: Promise<void> = Promise.resolve();
    await fc.assert(
      fc.asyncProperty(mutation, (m) => {
        // Half the time from the real seeds: inputs kept for new code are mostly refused ones, and mutating only
        // those drifts away from the valid structure the deeper code needs.
        const input = applyMutation(m.seed % 2 === 0 ? seeds : corpus, m);
        inFlight = worker.run(input).then((o) => record(input, o));
        return inFlight;
      }),
      { numRuns: Number.MAX_SAFE_INTEGER, interruptAfterTimeLimit: seconds * 1000, markInterruptAsFailure: false, seed },
    );
    await inFlight;
  } finally {
    tally.seconds = (Date.now() - started) / 1000;
    tally.corpus = corpus.length;
    await worker.close();
  }
  return tally;
}

async function main(): Promise<void> {
  const seconds = Number(arg('seconds') ?? process.env.FUZZ_SECONDS ?? 60);
  const seed = Number(arg('seed') ?? Date.now() % 2 ** 31);
  const only = arg('only')?.split(',');
  blind = process.argv.includes('--blind');
  const targets = Object.keys(TARGETS).filter((t) => !only || only.includes(t));
  const seeds = await loadSeeds();
  const known = new Set(listRegressions().map((r) => findingKey(path.basename(r.file).split('-')[0], r.symptom)));
  console.log(`fuzzing ${targets.length} targets for ${seconds} s each (seed ${seed}, ${blind ? 'blind' : 'coverage-guided'})`);
  const tallies: Tally[] = [];
  for (const target of targets) {
    const t = await fuzzTarget(target, seeds[target], seconds, seed, known);
    tallies.push(t);
    console.log(
      `${target.padEnd(22)} ${String(t.execs).padStart(8)} execs ${Math.round(t.execs / t.seconds).toString().padStart(6)}/s  ok ${t.ok}  rejected ${t.rejected}` +
        `  corpus ${t.corpus}  functions+blocks reached ${t.reached}  new findings ${t.found.length}`,
    );
  }
  const total = tallies.reduce((n, t) => n + t.found.length, 0);
  console.log(total === 0 ? 'no new findings' : `${total} new findings saved under test/fuzz/regressions/`);
  if (!only || only.includes('apk-differential')) {
    const disagreements = await apkDifferential(Number(arg('mutants') ?? DEFAULT_MUTANTS), seed);
    if (disagreements) process.exitCode = 1;
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
