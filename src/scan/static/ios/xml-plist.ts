// A strict reader for Apple's XML property list format (DTD PropertyList-1.0).
// Written here because the `plist` package is ESM-only without a `require` export, which this
// CommonJS project cannot load; it also resolves no external entities, so XXE is impossible.
// The tokenizer is a single forward pass: every search starts where the last one ended and a search that finds
// no terminator ends the parse, so the time is linear in the document (a regular expression that retried from
// every `<?` made 160 KB of them take seconds). Tokens are pulled one at a time, never collected, and the values
// built are counted against LIMITS.plistValues and nested at most LIMITS.xmlDepth deep.

import { LimitExceededError } from '../package/errors';
import { LIMITS } from '../package/limits';

export type PlistValue = string | number | boolean | Date | Buffer | PlistValue[] | { [key: string]: PlistValue };

export class PlistSyntaxError extends Error {}

type Token = { kind: 'open' | 'close' | 'empty'; name: string } | { kind: 'text'; text: string };

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** Parses an XML plist document; throws PlistSyntaxError on anything malformed, LimitExceededError past a cap. */
export function parseXmlPlist(xml: string): PlistValue {
  const tokens = new Tokenizer(xml);
  let values = 0;
  const counted = () => {
    if (++values > LIMITS.plistValues) throw new LimitExceededError('plistValues', `property list has over ${LIMITS.plistValues} values`);
  };
  const next = (): Token | undefined => tokens.next();
  const expectOpen = (name: string) => {
    const t = next();
    if (!t || t.kind !== 'open' || t.name !== name) throw new PlistSyntaxError(`expected <${name}>`);
  };
  const textUntilClose = (name: string): string => {
    let text = '';
    for (let t = next(); ; t = next()) {
      if (!t) throw new PlistSyntaxError(`unterminated <${name}>`);
      if (t.kind === 'text') text += t.text;
      else if (t.kind === 'close' && t.name === name) return text;
      else throw new PlistSyntaxError(`unexpected <${t.name}> inside <${name}>`);
    }
  };
  const skipSpace = () => {
    for (let t = tokens.peek(); t?.kind === 'text' && t.text.trim() === ''; t = tokens.peek()) tokens.next();
  };
  const value = (depth: number): PlistValue => {
    if (depth > LIMITS.xmlDepth) throw new LimitExceededError('xmlDepth', `property list nests over ${LIMITS.xmlDepth} levels deep`);
    counted();
    skipSpace();
    const t = next();
    if (!t || t.kind === 'text' || t.kind === 'close') throw new PlistSyntaxError('expected a value element');
    if (t.kind === 'empty') return emptyValue(t.name);
    switch (t.name) {
      case 'dict': return dict(depth);
      case 'array': return array(depth);
      case 'string': return textUntilClose('string');
      case 'key': throw new PlistSyntaxError('<key> outside a <dict>');
      case 'integer': return number(textUntilClose('integer'), true);
      case 'real': return number(textUntilClose('real'), false);
      case 'date': return date(textUntilClose('date'));
      case 'data': return Buffer.from(textUntilClose('data').replace(/\s+/g, ''), 'base64');
      case 'true': textUntilClose('true'); return true;
      case 'false': textUntilClose('false'); return false;
      default: throw new PlistSyntaxError(`unknown element <${t.name}>`);
    }
  };
  const dict = (depth: number): { [key: string]: PlistValue } => {
    const out: { [key: string]: PlistValue } = Object.create(null);
    for (;;) {
      skipSpace();
      const t = next();
      if (t?.kind === 'close' && t.name === 'dict') return out;
      if (!t || t.kind !== 'open' || t.name !== 'key') throw new PlistSyntaxError('expected <key> in <dict>');
      const key = textUntilClose('key');
      out[key] = value(depth + 1);
    }
  };
  const array = (depth: number): PlistValue[] => {
    const out: PlistValue[] = [];
    for (;;) {
      skipSpace();
      const t = tokens.peek();
      if (t?.kind === 'close' && t.name === 'array') {
        tokens.next();
        return out;
      }
      out.push(value(depth + 1));
    }
  };

  skipSpace();
  expectOpen('plist');
  const root = value(0);
  skipSpace();
  const end = next();
  if (!end || end.kind !== 'close' || end.name !== 'plist') throw new PlistSyntaxError('expected </plist>');
  return root;
}

function emptyValue(name: string): PlistValue {
  switch (name) {
    case 'true': return true;
    case 'false': return false;
    case 'string': return '';
    case 'dict': return Object.create(null) as { [key: string]: PlistValue };
    case 'array': return [];
    case 'data': return Buffer.alloc(0);
    default: throw new PlistSyntaxError(`<${name}/> has no value`);
  }
}

/**
 * Longest text of an <integer> or <real>: a 64-bit integer has at most 20 digits and the shortest text of a double
 * at most 24 characters, so anything longer is no number a writer produces (and is refused unread).
 */
const MAX_NUMBER_TEXT = 64;
const INTEGER = /^[+-]?(?:\d+|0x[0-9a-f]+)$/i;
// Each character can be matched one way only: `\d+\.?\d*` let a run of digits split between its two `\d`s in
// every way, so a long run followed by a non-digit was retried quadratically (40,000 digits: 1.7 s).
const REAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?$/i;

function number(text: string, integer: boolean): number {
  const s = text.trim();
  if (s.length > MAX_NUMBER_TEXT) throw new PlistSyntaxError(`not a number: ${s.length} characters in <${integer ? 'integer' : 'real'}>`);
  if (!(integer ? INTEGER : REAL).test(s)) throw new PlistSyntaxError(`not a number: ${s}`);
  return Number(s);
}

// Date's own parser, linear in its input (a megabyte of digits, spaces or month names is parsed in milliseconds).
function date(text: string): Date {
  const d = new Date(text.trim());
  if (Number.isNaN(d.getTime())) throw new PlistSyntaxError(`not a date: ${text}`);
  return d;
}

/**
 * Pulls element and text tokens off the document; declarations, comments and DOCTYPE are dropped.
 * `at` only moves forward, and each indexOf starts at `at`, so every character is looked at a bounded number of times.
 */
class Tokenizer {
  private at = 0;
  private ahead: Token | undefined;
  private peeked = false;
  // XML allows one DOCTYPE, in the prolog (before the first element tag).
  private doctypeSeen = false;
  private prologOver = false;

  constructor(private readonly xml: string) {}

  peek(): Token | undefined {
    if (!this.peeked) {
      this.ahead = this.read();
      this.peeked = true;
    }
    return this.ahead;
  }

  next(): Token | undefined {
    const t = this.peek();
    this.peeked = false;
    return t;
  }

  private read(): Token | undefined {
    const xml = this.xml;
    while (this.at < xml.length) {
      const lt = xml.indexOf('<', this.at);
      if (lt !== this.at) {
        const end = lt < 0 ? xml.length : lt;
        const text = xml.slice(this.at, end);
        this.at = end;
        return { kind: 'text', text: decodeEntities(text) };
      }
      if (xml.startsWith('<!--', lt)) this.at = this.past('-->', lt + 4, 'comment');
      else if (xml.startsWith('<?', lt)) this.at = this.past('?>', lt + 2, 'processing instruction');
      else if (xml.startsWith('<![CDATA[', lt)) {
        const end = this.past(']]>', lt + 9, 'CDATA section');
        this.at = end;
        return { kind: 'text', text: xml.slice(lt + 9, end - 3) };
      } else if (xml.startsWith('<!DOCTYPE', lt)) this.at = this.pastDoctype(lt + 9);
      else {
        this.prologOver = true;
        return this.tag(lt);
      }
    }
    return undefined;
  }

  /** Index just past the next `terminator` at or after `from`; none is a syntax error (never a rescan). */
  private past(terminator: string, from: number, what: string): number {
    const i = this.xml.indexOf(terminator, from);
    if (i < 0) throw new PlistSyntaxError(`unterminated ${what}`);
    return i + terminator.length;
  }

  /**
   * Index just past the DOCTYPE whose name starts at `from`. Its characters are walked once, up to the `>` or `[`
   * that comes first: a search for `[` alone read to the end of the document for each DOCTYPE (8 MB of them: 22 s),
   * and a second DOCTYPE, or one after the root element, is refused as XML refuses it.
   */
  private pastDoctype(from: number): number {
    if (this.doctypeSeen) throw new PlistSyntaxError('second DOCTYPE');
    if (this.prologOver) throw new PlistSyntaxError('DOCTYPE after the root element');
    this.doctypeSeen = true;
    const xml = this.xml;
    let i = from;
    while (i < xml.length && xml[i] !== '>' && xml[i] !== '[') i++;
    if (i === xml.length) throw new PlistSyntaxError('unterminated DOCTYPE');
    if (xml[i] === '>') return i + 1;
    // An internal subset: `[ ... ]` then `>`. Plists never have one; it is skipped, never interpreted.
    return this.past('>', this.past(']', i + 1, 'DOCTYPE'), 'DOCTYPE');
  }

  private tag(lt: number): Token {
    const gt = this.xml.indexOf('>', lt + 1);
    if (gt < 0) throw new PlistSyntaxError('malformed markup');
    const inner = this.xml.slice(lt + 1, gt);
    this.at = gt + 1;
    const m = /^(\/?)([A-Za-z][\w.-]*)(?:\s[^<>]*?)?(\/?)$/.exec(inner);
    if (!m) throw new PlistSyntaxError('malformed markup');
    return { kind: m[1] ? 'close' : m[3] ? 'empty' : 'open', name: m[2] };
  }
}

function decodeEntities(text: string): string {
  if (text.includes('<')) throw new PlistSyntaxError('malformed markup');
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, ref: string) => {
    if (ref[0] === '#') {
      const code = ref[1] === 'x' || ref[1] === 'X' ? Number.parseInt(ref.slice(2), 16) : Number.parseInt(ref.slice(1), 10);
      return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    const entity = ENTITIES[ref];
    if (entity === undefined) throw new PlistSyntaxError(`unknown entity &${ref};`);
    return entity;
  });
}
