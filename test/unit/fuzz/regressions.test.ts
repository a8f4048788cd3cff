// Protects: each input `npm run fuzz` found to crash, hang or blow up a parser now ends in a result or the
// parser's own error type, within the fuzzer's memory bound.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { FuzzWorker } from '../../fuzz/harness';
import { listRegressions } from '../../fuzz/regressions';
import { TARGETS } from '../../fuzz/targets';
import { TEST_BOUNDS } from './bounds';

jest.setTimeout(120_000);

const regressions = listRegressions();

it('every saved regression names a known target and says what it did', () => {
  for (const r of regressions) {
    expect(Object.keys(TARGETS)).toContain(r.target);
    expect(r.symptom).not.toBe('');
  }
});

describe.each(Object.keys(TARGETS))('%s', (target) => {
  const mine = regressions.filter((r) => r.target === target);
  if (mine.length === 0) return;
  let worker: FuzzWorker;
  beforeAll(() => {
    worker = new FuzzWorker(target, TEST_BOUNDS);
  });
  afterAll(() => worker.close());

  it.each(mine.map((r) => [path.basename(r.file), r] as const))('%s ends in a result or a typed error', async (_name, r) => {
    const outcome = await worker.run(readFileSync(r.file));
    expect({ outcome, was: r.symptom }).toEqual({ outcome: { kind: expect.stringMatching(/^(ok|rejected)$/) }, was: r.symptom });
  });
});
