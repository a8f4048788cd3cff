// Protects: the console's Attestation view explains every reason a real attestation engine gives, and no other: a
// reason the service adds gets words before support meets it (a verdict counted under an unexplained reason is a
// column without a legend), and the verdict colour the view gives each reason is the verdict the service gives it.
import { ATTEST_REASONS as SERVICE_REASONS, verdictOf, type AttestReason } from '../../src/attest/reasons';
import type { EngineName } from '../../src/services/attest/engines';
import { ATTEST_REASONS, ENGINES, SUSPICIOUS_REASONS } from '../../console/src/views/attest-reasons';

it('explains every reason of src/attest/reasons.ts, and `none` for a trusted verdict', () => {
  expect(Object.keys(ATTEST_REASONS).sort()).toEqual(['none', ...SERVICE_REASONS].sort());
});

it('explains each in a sentence', () => {
  for (const [reason, words] of Object.entries(ATTEST_REASONS)) {
    expect({ reason, words: words.length > 20 && /^[A-Z].*[.)]$/.test(words) }).toEqual({ reason, words: true });
  }
});

it('calls suspicious the reasons the service calls suspicious, and only those', () => {
  const suspicious = SERVICE_REASONS.filter((r: AttestReason) => verdictOf([r]) === 'suspicious');
  expect([...SUSPICIOUS_REASONS].sort()).toEqual([...suspicious].sort());
  expect(verdictOf([])).toBe('trusted');
});

it('names every engine the service counts verdicts of', () => {
  const engines: Record<EngineName, true> = { app_attest: true, play_integrity: true, key_attestation: true };
  expect(ENGINES.map((e) => e.id).sort()).toEqual(Object.keys(engines).sort());
});
