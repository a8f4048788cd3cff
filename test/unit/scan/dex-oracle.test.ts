// The DEX reader against the real tools: baksmali lists every string and type id of a file, dexdump prints the
// header's counts and each const-string's bytes with its string index. Files from smali and D8 (test/fixtures/dex-corpus.ts).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { DexStrings, descriptorPackage, readDexStrings } from '../../../src/scan/static/dex/dex-strings';
import { dexCorpus, type DexCorpus } from '../../fixtures/dex-corpus';
import { run } from '../../support/host-tools';

jest.setTimeout(240_000);

let corpus: DexCorpus;
beforeAll(async () => {
  corpus = await dexCorpus();
});

/** baksmali writes a string as a Java literal: these are the escapes it uses. */
function unescapeJava(literal: string): string {
  return literal.replace(/\\(u[0-9a-fA-F]{4}|.)/g, (_, e: string) => {
    if (e[0] === 'u' && e.length === 5) return String.fromCharCode(parseInt(e.slice(1), 16));
    return ({ n: '\n', r: '\r', t: '\t', b: '\b', f: '\f', '0': '\0' } as Record<string, string>)[e] ?? e;
  });
}

async function baksmaliList(what: 'strings' | 'types', file: string): Promise<string[]> {
  const { stdout } = await run('baksmali', ['list', what, file], { maxBuffer: 256 << 20 });
  const lines = stdout.split('\n');
  lines.pop(); // the newline after the last line
  return what === 'strings' ? lines.map((l) => unescapeJava(l.slice(1, -1))) : lines;
}

async function dexdump(args: string[], file: string): Promise<Buffer> {
  return (await run('dexdump', [...args, file], { encoding: 'buffer', maxBuffer: 256 << 20 })).stdout;
}

/** Java's modified UTF-8 of a string, to compare with the bytes dexdump prints (it prints the string data as is). */
function mutf8(s: string): Buffer {
  const out: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c !== 0 && c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 0x3f));
    else out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
  }
  return Buffer.from(out);
}

describe('DEX string table and type ids, as baksmali and dexdump read them', () => {
  test('the corpus has files from smali and from D8', () => {
    expect(corpus.skipped).toEqual([]);
    expect(corpus.fixtures.map((f) => f.tool).sort()).toEqual(['d8', 'smali']);
    expect(corpus.cleanDex.length).toBeGreaterThan(0);
  });

  test.each(['smali-mutf8', 'd8-java'])('%s: every string and type descriptor, in table order', async (name) => {
    const file = corpus.fixtures.find((f) => f.name === name)!.file;
    const ours = readDexStrings(await readFile(file));
    expect(ours.strings).toEqual(await baksmaliList('strings', file));
    expect(ours.typeDescriptors).toEqual(await baksmaliList('types', file));
    // The literals with every MUTF-8 form are in the table (non-ASCII, supplementary pairs, lone surrogates, NUL).
    expect(ours.strings).toEqual(expect.arrayContaining(['supplementary 😀 𐐷 \udbff\udfff', 'nul\u0000inside and at the end\u0000']));
  });

  test.each(['smali-mutf8', 'd8-java'])('%s: the header counts dexdump -f prints, and each const-string dexdump -d prints at its index', async (name) => {
    const file = corpus.fixtures.find((f) => f.name === name)!.file;
    const bytes = await readFile(file);
    const dex = new DexStrings(bytes);
    const header = (await dexdump(['-f'], file)).toString('latin1');
    expect(dex.header.stringIdsSize).toBe(Number(/string_ids_size\s*:\s*(\d+)/.exec(header)![1]));
    expect(dex.header.typeIdsSize).toBe(Number(/type_ids_size\s*:\s*(\d+)/.exec(header)![1]));
    const code = (await dexdump(['-d'], file)).toString('latin1');
    const loads = [...code.matchAll(/const-string v\d+, "(.*)" \/\/ string@([0-9a-f]+)\n/g)];
    expect(loads.length).toBeGreaterThanOrEqual(7);
    for (const [, printed, index] of loads) expect(mutf8(dex.at(parseInt(index, 16)))).toEqual(Buffer.from(printed, 'latin1'));
  });

  test('DEX from real jars (D8): the whole string table and the type ids match baksmali', async () => {
    for (const file of corpus.cleanDex) {
      const ours = readDexStrings(await readFile(file));
      const strings = await baksmaliList('strings', file);
      expect(ours.strings.length).toBe(strings.length);
      expect(ours.strings).toEqual(strings);
      expect(ours.typeDescriptors).toEqual(await baksmaliList('types', file));
    }
  });

  test('the Java packages of type descriptors', async () => {
    const file = corpus.fixtures.find((f) => f.name === 'smali-mutf8')!.file;
    const { typeDescriptors } = readDexStrings(await readFile(file));
    const packages = [...new Set(typeDescriptors.map(descriptorPackage).filter((p) => p !== null))].sort();
    // baksmali's class list, turned into packages by hand: what the reader must find.
    const classes = (await run('baksmali', ['list', 'classes', file])).stdout.trim().split('\n');
    const expected = [...new Set(classes.filter((c) => c.includes('/')).map((c) => c.slice(1, c.lastIndexOf('/')).replace(/\//g, '.')))];
    expect(packages).toEqual(expect.arrayContaining(expected));
    expect(packages).toContain('org.example.other.deep');
    expect(packages).not.toContain('');
    expect(descriptorPackage('[Lcom/example/A;')).toBeNull();
    expect(descriptorPackage('I')).toBeNull();
    expect(path.basename(file)).toBe('smali-mutf8.dex');
  });
});
