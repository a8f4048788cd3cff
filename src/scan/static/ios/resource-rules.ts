import { LimitExceededError } from '../package/errors';
import { LIMITS } from '../package/limits';
import { PosixRegex, RegexSyntaxError, type MatchBudget } from './posix-regex';
import { boolAt, isDict } from './read-plist';

/** One rule of CodeResources rules2, as codesign's ResourceBuilder::addRule reads it. */
export type ResourceRule = { regex: PosixRegex; weight: number; omit: boolean; optional: boolean; nested: boolean };

export class ResourceRulesError extends Error {}

/**
 * Reads rules2: a key is a POSIX extended regular expression, its value `true` (weight 1), `false` (omitted) or a
 * dictionary with `weight`, `omit`, `optional` and `nested`. An invalid rule makes codesign reject the whole seal.
 */
export function readResourceRules(value: unknown): ResourceRule[] {
  if (!isDict(value)) throw new ResourceRulesError('rules2 is not a dictionary');
  const entries = Object.entries(value);
  if (entries.length > LIMITS.sealRules) throw new LimitExceededError('sealRules', `CodeResources has ${entries.length} rules, over the ${LIMITS.sealRules} limit`);
  return entries.map(([pattern, spec]) => {
    let regex: PosixRegex;
    try {
      regex = new PosixRegex(pattern);
    } catch (err) {
      if (err instanceof RegexSyntaxError) throw new ResourceRulesError(`rule ${JSON.stringify(pattern.slice(0, 80))} is not a valid regular expression (${err.message})`);
      throw err;
    }
    if (typeof spec === 'boolean') return { regex, weight: 1, omit: !spec, optional: false, nested: false };
    if (!isDict(spec)) throw new ResourceRulesError(`rule ${JSON.stringify(pattern.slice(0, 80))} is neither a boolean nor a dictionary`);
    const weight = typeof spec.weight === 'number' && Number.isFinite(spec.weight) ? Math.max(0, Math.trunc(spec.weight)) : 1;
    return { regex, weight, omit: boolAt(spec, 'omit') === true, optional: boolAt(spec, 'optional') === true, nested: boolAt(spec, 'nested') === true };
  });
}

/**
 * The rule that governs a path, as ResourceBuilder::findRule picks it: of the rules that match, the heaviest; on
 * equal weights the first one met. (codesign's exclusions, which win outright, are applied by the caller.)
 */
export function findRule(rules: ResourceRule[], path: string, budget: MatchBudget): ResourceRule | null {
  let best: ResourceRule | null = null;
  for (const rule of rules) {
    if ((!best || rule.weight > best.weight) && rule.regex.test(path, budget)) best = rule;
  }
  return best;
}
