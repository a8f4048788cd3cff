// A strict reader for Apple's XML property list format (DTD PropertyList-1.0).
// Written here because the `plist` package is ESM-only without a `require` export, which this
// CommonJS project cannot load; it also resolves no external entities, so XXE is impossible.

export type PlistValue = string | number | boolean | Date | Buffer | PlistValue[] | { [key: string]: PlistValue };

export class PlistSyntaxError extends Error {}

type Token = { kind: 'open' | 'close' | 'empty'; name: string } | { kind: 'text'; text: string };

const MAX_DEPTH = 128;
const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** Parses an XML plist document; throws PlistSyntaxError on anything malformed. */
export function parseXmlPlist(xml: string): PlistValue {
  const tokens = tokenize(xml);
  let i = 0;
  const next = (): Token | undefined => tokens[i++];
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
    while (tokens[i]?.kind === 'text' && (tokens[i] as { text: string }).text.trim() === '') i++;
  };
  const value = (depth: number): PlistValue => {
    if (depth > MAX_DEPTH) throw new PlistSyntaxError('plist nested too deeply');
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
      const t = tokens[i];
      if (t?.kind === 'close' && t.name === 'array') {
        i++;
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

function number(text: string, integer: boolean): number {
  const s = text.trim();
  if (integer ? !/^[+-]?(\d+|0x[0-9a-f]+)$/i.test(s) : !/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(s)) {
    throw new PlistSyntaxError(`not a number: ${s}`);
  }
  return Number(s);
}

function date(text: string): Date {
  const d = new Date(text.trim());
  if (Number.isNaN(d.getTime())) throw new PlistSyntaxError(`not a date: ${text}`);
  return d;
}

/** Splits the document into element and text tokens; declarations, comments and DOCTYPE are dropped. */
function tokenize(xml: string): Token[] {
  const tokens: Token[] = [];
  const markup = /<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<!DOCTYPE[^>[]*(?:\[[\s\S]*?\])?\s*>|<!\[CDATA\[([\s\S]*?)\]\]>|<(\/?)([A-Za-z][\w.-]*)(?:\s[^<>]*?)?(\/?)>/g;
  let last = 0;
  for (let m = markup.exec(xml); m; m = markup.exec(xml)) {
    if (m.index > last) tokens.push({ kind: 'text', text: decodeEntities(xml.slice(last, m.index)) });
    last = markup.lastIndex;
    if (m[1] !== undefined) tokens.push({ kind: 'text', text: m[1] });
    else if (m[3]) tokens.push({ kind: m[2] ? 'close' : m[4] ? 'empty' : 'open', name: m[3] });
  }
  const rest = xml.slice(last);
  if (rest.includes('<')) throw new PlistSyntaxError('malformed markup');
  if (rest.trim()) tokens.push({ kind: 'text', text: decodeEntities(rest) });
  return tokens;
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
