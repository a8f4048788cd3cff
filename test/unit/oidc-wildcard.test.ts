// Protects: the trust-rule wildcard (spec, Trust rule: `*` matches any text that contains no colon) is matched by a
// linear algorithm that agrees with the reference definition (a regular expression with `[^:]*` per `*`) on random
// patterns and texts, case-sensitively and not, including colons, repeated stars and regex metacharacters.
import fc from 'fast-check';
import { wildcardMatches } from '../../src/oidc/subject';

/** The definition, as a regular expression: exact but exponential in the stars, so only for small inputs. */
function reference(pattern: string, text: string, ignoreCase: boolean): boolean {
  const source = pattern
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^:]*');
  return new RegExp(`^${source}$`, ignoreCase ? 'is' : 's').test(text);
}

// A small alphabet makes matches frequent; it holds the colon, the star, case pairs and regex metacharacters.
const alphabet = fc.constantFrom('a', 'b', 'A', ':', '/', '.', '-', '(', '\n');
const text = fc.array(alphabet, { maxLength: 14 }).map((chars) => chars.join(''));
const pattern = fc.array(fc.oneof(alphabet, fc.constant('*')), { maxLength: 10 }).map((chars) => chars.join(''));

describe('wildcardMatches', () => {
  it('agrees with the reference definition on random patterns and texts', () => {
    fc.assert(
      fc.property(pattern, text, fc.boolean(), (p, t, ignoreCase) => wildcardMatches(p, t, { ignoreCase }) === reference(p, t, ignoreCase)),
      { numRuns: 5000 },
    );
  });

  it('agrees with the reference on texts built to match (a pattern with its stars filled in)', () => {
    const filled = fc.tuple(pattern, fc.array(text, { minLength: 10, maxLength: 10 })).map(([p, fills]) => {
      let i = 0;
      return { p, t: p.replace(/\*/g, () => fills[i++].replace(/:/g, '')) };
    });
    fc.assert(
      fc.property(filled, ({ p, t }) => {
        expect(wildcardMatches(p, t, { ignoreCase: false })).toBe(true);
        return reference(p, t, false);
      }),
      { numRuns: 2000 },
    );
  });

  it('lets * match text without a colon only, everything else literally', () => {
    expect(wildcardMatches('refs/heads/*', 'refs/heads/main', { ignoreCase: false })).toBe(true);
    expect(wildcardMatches('refs/heads/*', 'refs/heads/x:y', { ignoreCase: false })).toBe(false);
    expect(wildcardMatches('v1.*', 'v1x2', { ignoreCase: false })).toBe(false);
    expect(wildcardMatches('*', '', { ignoreCase: false })).toBe(true);
    expect(wildcardMatches('a*', 'a:', { ignoreCase: false })).toBe(false);
  });
});
