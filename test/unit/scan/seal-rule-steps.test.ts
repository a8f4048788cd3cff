// Protects: matching a bundle's paths against its seal rules (src/scan/static/ios/posix-regex.ts) counts the work it
// does against LIMITS.sealRuleSteps: a new transition of the lazy automaton looks at every range of every character
// set of the states it leaves, and each of those is a step, so a pattern of wide bracket expressions cannot do many
// times the work the cap allows while counting one step per character.
import { PosixRegex } from '../../../src/scan/static/ios/posix-regex';

/** A bracket expression of `n` one-character ranges (CJK characters) and the lower-case letters. */
const wideSet = (n: number) => `[${Array.from({ length: n }, (_, i) => String.fromCharCode(0x4e00 + i)).join('')}a-z]`;

test('each new transition counts the ranges of the sets it scans', () => {
  const ranges = 200;
  const pattern = new PosixRegex(`(${wideSet(ranges)}){30}!`);
  const text = 'abcdefghijklmnopqrstuvwxyz'.repeat(2);
  const budget = { steps: 0 };
  expect(pattern.test(text, budget)).toBe(false);
  // Every character is new to the automaton here (a different letter at every position until the alphabet repeats),
  // and from the second on, states holding several copies of the set are left: at least one set scan per character.
  expect(budget.steps).toBeGreaterThan(26 * ranges);
});

test('a plain pattern still costs a few steps per character', () => {
  const budget = { steps: 0 };
  expect(new PosixRegex('^Resources/.*\\.lproj/').test(`Resources/${'a/'.repeat(2000)}x.lproj/y`, budget)).toBe(true);
  expect(budget.steps).toBeLessThan(4000 * 10);
});
