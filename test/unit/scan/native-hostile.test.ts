// Hostile ELF files, made from a real library by editing the fields the reader trusts least: each read ends quickly
// with MalformedElfError, LimitExceededError or facts, never another error.
import { readFile } from 'node:fs/promises';
import { LimitExceededError } from '../../../src/scan/static/package/errors';
import { MalformedElfError, readElf, type ElfFacts } from '../../../src/scan/static/native/elf';
import { nativeCorpus } from '../../fixtures/native-corpus';
import { run } from '../../support/host-tools';

let lib: Buffer;
let dynstr: { offset: number; size: number };
let dynamicPhdr: number;
let gnuHash: { offset: number; size: number };

beforeAll(async () => {
  const corpus = await nativeCorpus();
  const file = corpus.libraries.find((l) => l.name === 'x86_64/hardened')?.file as string;
  lib = await readFile(file);
  const { stdout } = await run('readelf', ['-SW', file]);
  const section = (name: string) => {
    const m = new RegExp(`\\s${name.replace('.', '\\.')}\\s+\\w+\\s+[0-9a-f]+\\s+([0-9a-f]+)\\s+([0-9a-f]+)`).exec(stdout);
    if (!m) throw new Error(`no ${name} in readelf -S`);
    return { offset: parseInt(m[1], 16), size: parseInt(m[2], 16) };
  };
  dynstr = section('.dynstr');
  gnuHash = section('.gnu.hash');
  const phoff = Number(lib.readBigUInt64LE(32));
  const phnum = lib.readUInt16LE(56);
  dynamicPhdr = [...Array(phnum).keys()].map((i) => phoff + i * 56).find((at) => lib.readUInt32LE(at) === 2) as number;
}, 300_000);

async function read(bytes: Buffer): Promise<ElfFacts | Error> {
  const started = Date.now();
  const result = await readElf({ size: bytes.length, read: async (o, l) => bytes.subarray(o, o + l) }).catch((e: Error) => e);
  expect(Date.now() - started).toBeLessThan(1000);
  if (result instanceof Error && !(result instanceof MalformedElfError) && !(result instanceof LimitExceededError)) throw result;
  return result;
}

const edit = (f: (b: Buffer) => void) => {
  const b = Buffer.from(lib);
  f(b);
  return b;
};

test('a truncated header, and an ELF32 header cut short, are malformed', async () => {
  expect(await read(lib.subarray(0, 40))).toBeInstanceOf(MalformedElfError);
  expect(await read(lib.subarray(0, 60))).toBeInstanceOf(MalformedElfError);
  expect(await read(Buffer.from('not an elf file at all, but long enough to hold a header................'))).toBeInstanceOf(MalformedElfError);
});

test('program headers past the end, and e_phnum = PN_XNUM, end bounded', async () => {
  expect(await read(edit((b) => b.writeBigUInt64LE(BigInt(lib.length - 8), 32)))).toBeInstanceOf(MalformedElfError);
  expect(await read(edit((b) => b.writeBigUInt64LE(2n ** 63n, 32)))).toBeInstanceOf(MalformedElfError);
  expect(await read(edit((b) => b.writeUInt16LE(0xffff, 56)))).toBeInstanceOf(LimitExceededError);
});

test('a PT_DYNAMIC of 2^31 entries, one at an offset past the end, and one with no DT_NULL before the cap', async () => {
  expect(await read(edit((b) => b.writeBigUInt64LE(2n ** 31n * 16n, dynamicPhdr + 32)))).toBeInstanceOf(MalformedElfError);
  expect(await read(edit((b) => b.writeBigUInt64LE(BigInt(lib.length + 4096), dynamicPhdr + 8)))).toBeInstanceOf(MalformedElfError);
  // 5,000 DT_DEBUG entries appended to the file and named as the dynamic section.
  const entries = Buffer.alloc(5000 * 16);
  for (let i = 0; i < 5000; i++) entries.writeBigUInt64LE(21n, i * 16);
  const long = Buffer.concat([lib, entries]);
  long.writeBigUInt64LE(BigInt(lib.length), dynamicPhdr + 8);
  long.writeBigUInt64LE(BigInt(entries.length), dynamicPhdr + 32);
  const result = await read(long);
  expect(result).toBeInstanceOf(LimitExceededError);
  expect((result as LimitExceededError).limit).toBe('elfDynamicEntries');
});

test('a dynstr without NUL gives no names, and a GNU hash chain without its end bit is malformed', async () => {
  const noNul = await read(edit((b) => b.fill(0x41, dynstr.offset, dynstr.offset + dynstr.size)));
  expect(noNul).not.toBeInstanceOf(Error);
  expect((noNul as ElfFacts).symbols?.imports).toEqual([]);
  const buckets = gnuHash.offset + 16 + lib.readUInt32LE(gnuHash.offset + 8) * 8;
  const chains = buckets + lib.readUInt32LE(gnuHash.offset) * 4;
  // Chain words all even (0xfefefefe) up to the end of the read-only segment that holds them: no chain ends in it.
  const phoff = Number(lib.readBigUInt64LE(32));
  const firstLoadEnd = Number(lib.readBigUInt64LE(phoff + [...Array(lib.readUInt16LE(56)).keys()].find((i) => lib.readUInt32LE(phoff + i * 56) === 1)! * 56 + 32));
  expect(await read(edit((b) => b.fill(0xfe, chains, firstLoadEnd)))).toBeInstanceOf(MalformedElfError);
  // Buckets too: the highest names symbol 4,278,124,286, past the symbol cap.
  const far = await read(edit((b) => b.fill(0xfe, buckets, gnuHash.offset + gnuHash.size)));
  expect((far as LimitExceededError).limit).toBe('elfDynamicSymbols');
});

test('2,000 random edits of the header and program headers each end bounded', async () => {
  let seed = 42;
  const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff);
  for (let i = 0; i < 2000; i++) {
    await read(edit((b) => {
      for (let k = 0; k < 4; k++) b[next() % 0x400] = next() & 0xff;
    }));
  }
});
