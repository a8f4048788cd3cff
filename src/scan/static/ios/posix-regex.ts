import { LimitExceededError } from '../package/errors';
import { LIMITS } from '../package/limits';

/**
 * POSIX extended regular expressions as codesign compiles the rules of CodeResources (regcomp with REG_EXTENDED |
 * REG_NOSUB: only "does it match anywhere" is asked). The patterns come from the package, so they are never handed
 * to a backtracking engine: they compile to a Thompson NFA, run as a DFA built lazily, which costs a bounded number
 * of steps per character whatever the pattern. Supported: literals, `\`-escapes, `.`, bracket expressions (ranges,
 * negation, [:class:]), `^`, `$`, groups, `|`, `*`, `+`, `?` and `{m,n}`; anything else is an invalid pattern.
 */
export class RegexSyntaxError extends Error {}

/** Work shared by every match of one seal check (see LIMITS.sealRuleSteps). */
export type MatchBudget = { steps: number };

type CharSet = { negate: boolean; ranges: number[] };
type Node =
  | { t: 'set'; set: CharSet }
  | { t: 'bol' } | { t: 'eol' }
  | { t: 'cat'; items: Node[] }
  | { t: 'alt'; items: Node[] }
  | { t: 'rep'; node: Node; min: number; max: number };

const MAX_REPEAT = 255; // RE_DUP_MAX
const MAX_STATES = 4096;
const MAX_DFA_STATES = 2048;

const CLASSES: Record<string, number[]> = {
  alpha: [65, 90, 97, 122], digit: [48, 57], alnum: [48, 57, 65, 90, 97, 122], upper: [65, 90], lower: [97, 122],
  space: [9, 13, 32, 32], blank: [9, 9, 32, 32], punct: [33, 47, 58, 64, 91, 96, 123, 126], print: [32, 126],
  graph: [33, 126], cntrl: [0, 31, 127, 127], xdigit: [48, 57, 65, 70, 97, 102],
};

class Parser {
  private i = 0;
  constructor(private readonly src: string) {}

  parse(): Node {
    const node = this.alternation(0);
    if (this.i !== this.src.length) throw new RegexSyntaxError(`unexpected ')' at ${this.i}`);
    return node;
  }

  private alternation(depth: number): Node {
    if (depth > 64) throw new RegexSyntaxError('groups nested too deep');
    const items = [this.concatenation(depth)];
    while (this.src[this.i] === '|') {
      this.i++;
      items.push(this.concatenation(depth));
    }
    return items.length === 1 ? items[0] : { t: 'alt', items };
  }

  private concatenation(depth: number): Node {
    const items: Node[] = [];
    while (this.i < this.src.length && this.src[this.i] !== '|' && this.src[this.i] !== ')') {
      let atom = this.atom(depth);
      for (;;) {
        const q = this.quantifier();
        if (!q) break;
        if (atom.t === 'bol' || atom.t === 'eol') throw new RegexSyntaxError('quantified anchor');
        atom = { t: 'rep', node: atom, min: q.min, max: q.max };
      }
      items.push(atom);
    }
    if (items.length === 0) throw new RegexSyntaxError(`empty expression at ${this.i}`);
    return items.length === 1 ? items[0] : { t: 'cat', items };
  }

  private quantifier(): { min: number; max: number } | null {
    const c = this.src[this.i];
    if (c === '*') return this.i++, { min: 0, max: Infinity };
    if (c === '+') return this.i++, { min: 1, max: Infinity };
    if (c === '?') return this.i++, { min: 0, max: 1 };
    if (c !== '{') return null;
    const m = /^\{(\d{1,3})(,(\d{0,3}))?\}/.exec(this.src.slice(this.i, this.i + 10));
    if (!m) throw new RegexSyntaxError(`invalid repetition at ${this.i}`);
    this.i += m[0].length;
    const min = Number(m[1]);
    const max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
    if (min > MAX_REPEAT || (max !== Infinity && (max > MAX_REPEAT || max < min))) throw new RegexSyntaxError('invalid repetition count');
    return { min, max };
  }

  private atom(depth: number): Node {
    const c = this.src[this.i++];
    switch (c) {
      case '(': {
        const inner = this.alternation(depth + 1);
        if (this.src[this.i++] !== ')') throw new RegexSyntaxError('unclosed group');
        return inner;
      }
      case '^': return { t: 'bol' };
      case '$': return { t: 'eol' };
      case '.': return { t: 'set', set: { negate: true, ranges: [] } };
      case '[': return { t: 'set', set: this.bracket() };
      case '\\': {
        if (this.i >= this.src.length) throw new RegexSyntaxError('trailing backslash');
        const code = this.src.charCodeAt(this.i++);
        return { t: 'set', set: { negate: false, ranges: [code, code] } };
      }
      case '*': case '+': case '?': case '{':
        throw new RegexSyntaxError(`repetition with nothing to repeat at ${this.i - 1}`);
      default: {
        const code = c.charCodeAt(0);
        return { t: 'set', set: { negate: false, ranges: [code, code] } };
      }
    }
  }

  /** After '['; POSIX: a backslash is literal inside brackets and a leading ']' is a member. */
  private bracket(): CharSet {
    const set: CharSet = { negate: false, ranges: [] };
    if (this.src[this.i] === '^') set.negate = true, this.i++;
    let first = true;
    for (;;) {
      if (this.i >= this.src.length) throw new RegexSyntaxError('unclosed bracket expression');
      const c = this.src[this.i];
      if (c === ']' && !first) break;
      first = false;
      if (c === '[' && this.src[this.i + 1] === ':') {
        const end = this.src.indexOf(':]', this.i + 2);
        const ranges = end < 0 ? undefined : CLASSES[this.src.slice(this.i + 2, end)];
        if (!ranges) throw new RegexSyntaxError('unknown character class');
        set.ranges.push(...ranges);
        this.i = end + 2;
        continue;
      }
      if (c === '[' && (this.src[this.i + 1] === '.' || this.src[this.i + 1] === '=')) throw new RegexSyntaxError('collating elements are not supported');
      const lo = this.src.charCodeAt(this.i++);
      if (this.src[this.i] === '-' && this.src[this.i + 1] !== ']' && this.i + 1 < this.src.length) {
        const hi = this.src.charCodeAt(this.i + 1);
        if (hi < lo) throw new RegexSyntaxError('invalid range');
        set.ranges.push(lo, hi);
        this.i += 2;
      } else {
        set.ranges.push(lo, lo);
      }
    }
    this.i++;
    return set;
  }
}

// NFA state kinds.
const CHAR = 0, SPLIT = 1, EPS = 2, BOL = 3, EOL = 4, ACCEPT = 5;

type DState = { states: Int32Array; accept: boolean; next: Map<number, DState> };

/** A compiled pattern; `test` answers whether it matches anywhere in a string. */
export class PosixRegex {
  private readonly kind: number[] = [];
  private readonly out1: number[] = [];
  private readonly out2: number[] = [];
  private readonly sets: (CharSet | null)[] = [];
  private readonly start: number;
  private cache = new Map<string, DState>();
  private mark: Int32Array = new Int32Array(0);
  private generation = 0;

  constructor(readonly source: string) {
    if (source.length > LIMITS.sealRulePattern) throw new LimitExceededError('sealRulePattern', `a resource rule of ${source.length} characters, over the ${LIMITS.sealRulePattern}-character limit`);
    const ast = new Parser(source).parse();
    const accept = this.add(ACCEPT);
    this.start = this.compile(ast, accept);
    this.mark = new Int32Array(this.kind.length);
  }

  private add(kind: number, a = -1, b = -1, set: CharSet | null = null): number {
    if (this.kind.length >= MAX_STATES) throw new RegexSyntaxError(`pattern expands past ${MAX_STATES} states`);
    this.kind.push(kind);
    this.out1.push(a);
    this.out2.push(b);
    this.sets.push(set);
    return this.kind.length - 1;
  }

  /** Compiles `node` so that it continues to `next`; returns its entry state (built back to front). */
  private compile(node: Node, next: number): number {
    switch (node.t) {
      case 'set': return this.add(CHAR, next, -1, node.set);
      case 'bol': return this.add(BOL, next);
      case 'eol': return this.add(EOL, next);
      case 'cat': return node.items.reduceRight((to, item) => this.compile(item, to), next);
      case 'alt': {
        let entry = this.compile(node.items[node.items.length - 1], next);
        for (let k = node.items.length - 2; k >= 0; k--) entry = this.add(SPLIT, this.compile(node.items[k], next), entry);
        return entry;
      }
      case 'rep': {
        let entry = next;
        if (node.max === Infinity) {
          // A loop: split into the body (which returns to the split) or on.
          const loop = this.add(SPLIT, -1, next);
          this.out1[loop] = this.compile(node.node, loop);
          entry = loop;
        } else {
          // Each optional copy either runs (and goes on to the copies after it) or skips to what follows.
          for (let k = node.max - node.min; k > 0; k--) entry = this.add(SPLIT, this.compile(node.node, entry), next);
        }
        for (let k = 0; k < node.min; k++) entry = this.compile(node.node, entry);
        return entry;
      }
    }
  }

  /** Adds the epsilon closure of `from` into `into` (CHAR, EOL and ACCEPT states are kept). */
  private closure(from: number[], atStart: boolean, atEnd: boolean, budget: MatchBudget): number[] {
    const gen = ++this.generation;
    const stack = [...from];
    const kept: number[] = [];
    while (stack.length) {
      const s = stack.pop() as number;
      if (this.mark[s] === gen) continue;
      this.mark[s] = gen;
      charge(budget, 1);
      switch (this.kind[s]) {
        case SPLIT: stack.push(this.out2[s], this.out1[s]); break;
        case EPS: stack.push(this.out1[s]); break;
        case BOL: if (atStart) stack.push(this.out1[s]); break;
        case EOL: if (atEnd) stack.push(this.out1[s]); else kept.push(s); break;
        default: kept.push(s);
      }
    }
    return kept.sort((a, b) => a - b);
  }

  private dstate(states: number[]): DState {
    const key = states.join(',');
    let d = this.cache.get(key);
    if (!d) {
      // A full cache is dropped, as RE2 does: the cost stays linear, only the reuse is lost.
      if (this.cache.size >= MAX_DFA_STATES) this.cache = new Map();
      d = { states: Int32Array.from(states), accept: states.some((s) => this.kind[s] === ACCEPT), next: new Map() };
      this.cache.set(key, d);
    }
    return d;
  }

  test(text: string, budget: MatchBudget): boolean {
    let d = this.dstate(this.closure([this.start], true, text.length === 0, budget));
    for (let i = 0; i < text.length; i++) {
      if (d.accept) return true;
      const c = text.charCodeAt(i);
      charge(budget, 1);
      let n = d.next.get(c);
      if (!n) {
        // A new transition looks at every state of `d` and every range of their sets: counted as it is done, with
        // the key of the state it leads to, so the steps counted are the work (not one per character).
        const moved: number[] = [this.start];
        for (const s of d.states) {
          if (this.kind[s] !== CHAR) continue;
          const set = this.sets[s] as CharSet;
          charge(budget, 1 + (set.ranges.length >> 1));
          if (inSet(set, c)) moved.push(this.out1[s]);
        }
        const next = this.closure(moved, false, false, budget);
        charge(budget, next.length);
        n = this.dstate(next);
        d.next.set(c, n);
      }
      d = n;
    }
    if (d.accept) return true;
    // At the end of the text, `$` states may go on.
    const ends = [...d.states].filter((s) => this.kind[s] === EOL);
    return ends.length > 0 && this.closure(ends, text.length === 0, true, budget).some((s) => this.kind[s] === ACCEPT);
  }
}

function inSet(set: CharSet, c: number): boolean {
  let found = false;
  for (let k = 0; k < set.ranges.length; k += 2) {
    if (c >= set.ranges[k] && c <= set.ranges[k + 1]) {
      found = true;
      break;
    }
  }
  return found !== set.negate;
}

function charge(budget: MatchBudget, steps: number): void {
  budget.steps += steps;
  if (budget.steps > LIMITS.sealRuleSteps) {
    throw new LimitExceededError('sealRuleSteps', `matching the bundle's paths against its resource rules took over ${LIMITS.sealRuleSteps} steps`);
  }
}
