// Trust-rule matching bench: the worst case a tenant can write. A 2,000-character colon-free subject part (all `a`)
// against patterns of 8 `*` (the most a rule may hold) that cannot match, because they end with a character the text
// does not have, so every placement of every `*` is in play for a backtracking matcher. Prints microseconds per
// check for the linear matcher the service uses (src/oidc/subject.ts), and the whole evaluator on a token whose
// ref is that text against 20 such rules (the most an app may hold). For comparison, the regular expression the
// service used before (a `[^:]*` per `*`) is timed once on a 100-character text with 1 to 4 stars: its time grows
// with the text length to the power of the stars, and with 8 stars on 2,000 characters it would not finish.
// Target: the linear matcher's worst case stays under 1 ms per check, so 20 rules cost well under the exchange's
// own signature check.
// Run: npm run bench:rules
import { performance } from 'node:perf_hooks';
import { wildcardMatches } from '../src/oidc/subject';
import { evaluateRules } from '../src/oidc/providers/evaluate';
import { GITHUB } from '../src/oidc/providers/github';
import type { RuleConditions } from '../src/oidc/providers/model';

const TEXT_LENGTH = 2000;
const text = 'a'.repeat(TEXT_LENGTH);
const stars = (n: number, tail = 'b') => `${'a*'.repeat(n)}${tail}`;

function microsPerCall(fn: () => boolean, minMs = 300): number {
  for (let i = 0; i < 50; i++) fn(); // warm up the JIT
  let calls = 0;
  const start = performance.now();
  while (performance.now() - start < minMs) {
    if (fn()) throw new Error('the pattern matched: the bench measures non-matching patterns');
    calls++;
  }
  return ((performance.now() - start) * 1000) / calls;
}

const regexMatches = (pattern: string, value: string) => {
  const source = pattern
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^:]*');
  return new RegExp(`^${source}$`, 's').test(value);
};

const fmt = (us: number) => us.toFixed(1).padStart(10);
const TARGET_US = 1000;
console.log(`subject part: ${TEXT_LENGTH} characters; patterns that cannot match`);
console.log('pattern                          linear (us/check)');
let worst = 0;
for (const pattern of [stars(8), `*${'a*'.repeat(7)}b`, `${'*a'.repeat(8)}b`, `b${'*'.repeat(8)}`, `${'*'.repeat(8)}b`]) {
  const label = pattern.length > 30 ? `${pattern.slice(0, 27)}...` : pattern;
  const us = microsPerCall(() => wildcardMatches(pattern, text, { ignoreCase: false }));
  worst = Math.max(worst, us);
  console.log(`${label.padEnd(32)} ${fmt(us)}`);
}
console.log(`worst case ${worst.toFixed(1)} us per check; target < ${TARGET_US} us: ${worst < TARGET_US ? 'met' : 'NOT met'}`);

const rules: RuleConditions[] = Array.from({ length: 20 }, (_, i) => ({
  _id: `rul_${i}`,
  subjectPattern: `repo:acme/mobile-app:ref:refs/heads/${stars(8, `b${i}`)}`.replace('a*', 'x'),
  workflowRef: null,
  environment: null,
  repositoryId: null,
  repositoryOwnerId: null,
  events: null,
  scopes: ['builds:write'],
}));
// Only the last segment varies, so each rule reaches the ref check with its 8 stars.
for (const rule of rules) rule.subjectPattern = rule.subjectPattern!.replace('refs/heads/x', 'refs/heads/a');
const ref = `refs/heads/${text}`;
const payload = { sub: `repo:acme/mobile-app:ref:${ref}`, repository: 'acme/mobile-app', ref, event_name: 'push' };
const ISSUER = 'https://token.actions.githubusercontent.com';
const evaluation = evaluateRules(GITHUB, ISSUER, ISSUER, rules, payload);
if (evaluation.matches || evaluation.rules.some((r) => r.failed?.check !== 'subjectPattern.ref')) throw new Error('the bench rules must fail on the ref');
console.log(`\nevaluator, 20 rules of 8 * against a ${ref.length}-character ref: ${fmt(microsPerCall(() => evaluateRules(GITHUB, ISSUER, ISSUER, rules, payload).matches))} us/token`);

// The former matcher grows with the text length to the power of the stars: shown on a 100-character text.
const short = 'a'.repeat(100);
console.log(`\nthe former backtracking regular expression on ${short.length} characters (at 8 stars and 2,000 it would not finish):`);
for (const n of [1, 2, 3, 4]) {
  const pattern = stars(n);
  const start = performance.now();
  regexMatches(pattern, short);
  const regexUs = (performance.now() - start) * 1000;
  console.log(`${pattern.padEnd(32)} regex ${fmt(regexUs)} us   linear ${fmt(microsPerCall(() => wildcardMatches(pattern, short, { ignoreCase: false }), 50))} us`);
}
