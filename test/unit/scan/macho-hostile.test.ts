// Protects: the Mach-O symbol reader stays bounded on crafted files made from a real executable (clang + ld64.lld):
// a symbol count of 2^31, a string table past the end of the file, strings without NUL, a symbol table over the
// machoSymbols cap and a string table over machoStringBytes, a segment claiming more sections than it holds. Each
// ends in MachoError or LimitExceededError (never a crash), reading no more than the file, or reads what it can.
import { readFile } from 'node:fs/promises';
import { readMachoFacts } from '../../../src/scan/static/macho/hardening';
import { MachoError, type ByteSource } from '../../../src/scan/static/macho/macho';
import { LimitExceededError } from '../../../src/scan/static/package/errors';
import { LIMITS } from '../../../src/scan/static/package/limits';
import { machoCorpus } from '../../fixtures/macho-corpus';
import { otoolFacts } from '../../support/otool-facts';

jest.setTimeout(60_000);

const LC_SYMTAB = 0x2;
const LC_DYSYMTAB = 0xb;
const LC_SEGMENT_64 = 0x19;
const WATCH = new Set(['___stack_chk_fail', '___stack_chk_guard', '_strcpy']);

let original: Buffer;
let nmUndefined: string[];
beforeAll(async () => {
  const f = (await machoCorpus()).fixtures.find((x) => x.name === 'hardened');
  if (!f) throw new Error('corpus has no hardened executable');
  original = await readFile(f.file);
  nmUndefined = (await otoolFacts(f.file))[0].undefined;
});

/** A buffer as a ByteSource that counts the bytes it is asked for. */
function source(buf: Buffer): ByteSource & { requested: number } {
  const src = {
    size: buf.length,
    requested: 0,
    async ranges(rs: ReadonlyArray<readonly [number, number]>) {
      for (const [s, e] of rs) src.requested += Math.max(0, Math.min(e, buf.length) - s);
      return rs.map(([s, e]) => Buffer.from(buf.subarray(Math.min(s, buf.length), Math.min(e, buf.length))));
    },
  };
  return src;
}

/** File offset of the first load command `cmd` of a thin 64-bit little-endian Mach-O. */
function commandAt(buf: Buffer, cmd: number): number {
  const ncmds = buf.readUInt32LE(16);
  for (let i = 0, at = 32; i < ncmds; i++, at += buf.readUInt32LE(at + 4)) if (buf.readUInt32LE(at) === cmd) return at;
  throw new Error(`no load command 0x${cmd.toString(16)}`);
}

/** A copy of the executable, `size` bytes long (zero-padded), with LC_SYMTAB/LC_DYSYMTAB fields overwritten. */
function crafted(size: number, symtab: Partial<Record<'symoff' | 'nsyms' | 'stroff' | 'strsize', number>>, undefCount?: number): Buffer {
  const buf = Buffer.alloc(Math.max(size, original.length));
  original.copy(buf);
  const at = commandAt(buf, LC_SYMTAB);
  (['symoff', 'nsyms', 'stroff', 'strsize'] as const).forEach((k, i) => {
    if (symtab[k] !== undefined) buf.writeUInt32LE(symtab[k] as number, at + 8 + 4 * i);
  });
  if (undefCount !== undefined) buf.writeUInt32LE(undefCount, commandAt(buf, LC_DYSYMTAB) + 28);
  return buf;
}

async function outcome(buf: Buffer): Promise<{ error: unknown; requested: number; ms: number }> {
  const src = source(buf);
  const start = Date.now();
  const error = await readMachoFacts(src, WATCH).then(() => null, (err: unknown) => err);
  return { error, requested: src.requested, ms: Date.now() - start };
}

describe('a hostile symbol table', () => {
  it('nsyms 2^31 is refused before anything is read past the load commands', async () => {
    const r = await outcome(crafted(0, { nsyms: 2 ** 31 }));
    expect(r.error).toBeInstanceOf(MachoError);
    expect(r.requested).toBeLessThan(original.length);
  });

  it('a string table past the end of the file, or 2^31 bytes long, is refused', async () => {
    const at = original.readUInt32LE(commandAt(original, LC_SYMTAB) + 16);
    expect((await outcome(crafted(0, { stroff: original.length }))).error).toBeInstanceOf(MachoError);
    expect((await outcome(crafted(0, { stroff: at, strsize: 2 ** 31 }))).error).toBeInstanceOf(MachoError);
  });

  it('strings without NUL: the undefined symbols are counted as nm counts them, no name matches, no error', async () => {
    const buf = crafted(0, {});
    const t = commandAt(buf, LC_SYMTAB);
    const stroff = buf.readUInt32LE(t + 16);
    buf.fill(0x41, stroff, stroff + buf.readUInt32LE(t + 20));
    const facts = await readMachoFacts(source(buf), WATCH);
    expect(facts[0].undefinedSymbols).toBe(nmUndefined.length);
    expect(facts[0].imports).toEqual([]);
  });

  it(`over ${LIMITS.machoSymbols} entries to read (LC_DYSYMTAB's range not trusted past the table) stops at machoSymbols`, async () => {
    const nsyms = LIMITS.machoSymbols + 1;
    const r = await outcome(crafted(8192 + nsyms * 16, { symoff: 8192, nsyms, stroff: 0, strsize: 0 }, 0xffffffff));
    expect(r.error).toBeInstanceOf(LimitExceededError);
    expect((r.error as LimitExceededError).limit).toBe('machoSymbols');
    expect(r.requested).toBeLessThan(64 * 1024);
  });

  it(`a string table over ${LIMITS.machoStringBytes} bytes stops at machoStringBytes`, async () => {
    const strsize = LIMITS.machoStringBytes + 1;
    const r = await outcome(crafted(8192 + strsize, { stroff: 8192, strsize }));
    expect(r.error).toBeInstanceOf(LimitExceededError);
    expect((r.error as LimitExceededError).limit).toBe('machoStringBytes');
  });

  it('500,000 undefined symbols all naming one 8 MB string without NUL are read in linear time', async () => {
    const nsyms = 500_000;
    const strsize = 8 * 1024 * 1024;
    const symoff = 8192;
    const stroff = symoff + nsyms * 16;
    const buf = crafted(stroff + strsize, { symoff, nsyms, stroff, strsize }, 0xffffffff);
    for (let k = 0; k < nsyms; k++) buf.writeUInt8(0x01, symoff + k * 16 + 4); // N_UNDF | N_EXT, n_strx 0
    buf.fill(0x41, stroff, stroff + strsize);
    const start = Date.now();
    const facts = await readMachoFacts(source(buf), WATCH);
    expect(facts[0].undefinedSymbols).toBe(nsyms);
    expect(Date.now() - start).toBeLessThan(5000);
  });
});

describe('hostile load commands', () => {
  it('a segment claiming 2^31 sections is refused', async () => {
    const buf = Buffer.from(original);
    buf.writeUInt32LE(2 ** 31, commandAt(buf, LC_SEGMENT_64) + 64);
    expect((await outcome(buf)).error).toBeInstanceOf(MachoError);
  });
});
