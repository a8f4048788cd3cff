// Protects: every parser of the static analyser ends each mutated real input with a result or its own error
// type, within the fuzzer's memory bound (a short, fixed-seed run of each `npm run fuzz` target).
import fc from 'fast-check';
import { FuzzWorker, type Outcome } from '../../fuzz/harness';
import { applyMutation, mutation } from '../../fuzz/mutate';
import { loadSeeds, type Seeds } from '../../fuzz/seeds';
import { TARGETS } from '../../fuzz/targets';
import { TEST_BOUNDS } from './bounds';

jest.setTimeout(120_000);

const RUNS = 300;
let seeds: Seeds;
beforeAll(async () => {
  seeds = await loadSeeds();
});

it.each(Object.keys(TARGETS))(`%s survives its seeds and ${RUNS} mutations of them`, async (target) => {
  expect(seeds[target]?.length).toBeGreaterThan(0);
  const worker = new FuzzWorker(target, TEST_BOUNDS);
  const findings: Outcome[] = [];
  try {
    const inputs = [...seeds[target], ...fc.sample(mutation, { numRuns: RUNS, seed: 10 }).map((m) => applyMutation(seeds[target], m))];
    for (const input of inputs) {
      const outcome = await worker.run(input);
      if (outcome.kind !== 'ok' && outcome.kind !== 'rejected') findings.push(outcome);
    }
    // The seeds are real packages: at least they must parse.
    for (const s of seeds[target]) expect((await worker.run(s)).kind).toBe('ok');
  } finally {
    await worker.close();
  }
  expect(findings).toEqual([]);
});
