import { LimitExceededError } from '../package/errors';
import { LIMITS } from '../package/limits';
import { SHN_UNDEF, SHT_DYNSYM, STT_FUNC } from './elf-constants';
import { MalformedElfError, type ElfView } from './elf-view';

export type DynamicSymbols = {
  /** Entries of the table, the null symbol at index 0 included (what readelf --dyn-syms numbers). */
  count: number;
  /** Where the count came from: the dynamic section's hash tables first, the section headers only without them. */
  countFrom: 'DT_HASH' | 'DT_GNU_HASH' | 'section headers';
  /** Names of the undefined symbols (what the library imports), each once, in table order. */
  imports: string[];
  /** Defined STT_FUNC symbols: a library without any has no code of its own to protect. */
  definedFunctions: number;
};

type Load = { offset: number; vaddr: number; filesz: number };
type Where = {
  loads: readonly Load[];
  symtab: number;
  dynstr: Buffer;
  syment: number | null;
  hash: number | null;
  gnuHash: number | null;
  sections: { shoff: number; shentsize: number; shnum: number };
};

/** Entries read per chunk of a table, so memory stays at one chunk whatever the table's size. */
const CHUNK = 4096;
/** Longest symbol name read: C++ names are long, but past 4 KB the name is reported as corrupt and skipped. */
const MAX_NAME = 4096;

/**
 * The dynamic symbol table: its size from DT_HASH (nchain), else DT_GNU_HASH (the last chain's end), else the
 * SHT_DYNSYM section header, else unknown (null: stripped of section headers and without hash tables, which no
 * Android linker accepts). Only the undefined symbols' names are decoded, each at most MAX_NAME bytes long.
 */
export async function readDynamicSymbols(v: ElfView, w: Where): Promise<DynamicSymbols | null> {
  const counted = w.hash !== null ? { count: await countFromHash(v, w, w.hash), countFrom: 'DT_HASH' as const }
    : w.gnuHash !== null ? { count: await countFromGnuHash(v, w, w.gnuHash), countFrom: 'DT_GNU_HASH' as const }
    : await countFromSections(v, w);
  if (!counted) return null;
  const { count, countFrom } = counted;
  if (count > LIMITS.elfDynamicSymbols) throw new LimitExceededError('elfDynamicSymbols', `the dynamic symbol table holds ${count} symbols, over the ${LIMITS.elfDynamicSymbols} limit`);
  const entsize = w.syment ?? (v.elfClass === 64 ? 24 : 16);
  if (entsize < (v.elfClass === 64 ? 24 : 16)) throw new MalformedElfError(`DT_SYMENT ${entsize} is too small`);
  const base = v.fileOffset(w.loads, w.symtab, count * entsize, 'DT_SYMTAB');
  const imports = new Set<string>();
  let definedFunctions = 0;
  for (let first = 0; first < count; first += CHUNK) {
    const n = Math.min(CHUNK, count - first);
    const table = v.on(await v.read(base + first * entsize, n * entsize));
    for (let i = first === 0 ? 1 : 0; i < n; i++) {
      const at = i * entsize;
      const name = table.u32(at);
      const info = table.u8(at + (v.elfClass === 64 ? 4 : 12));
      const shndx = table.u16(at + (v.elfClass === 64 ? 6 : 14));
      if (shndx !== SHN_UNDEF) {
        if ((info & 0xf) === STT_FUNC) definedFunctions++;
        continue;
      }
      const text = nameAt(w.dynstr, name);
      if (text) imports.add(text);
    }
  }
  return { count, countFrom, imports: [...imports], definedFunctions };
}

function nameAt(dynstr: Buffer, at: number): string | null {
  if (at <= 0 || at >= dynstr.length) return null;
  const end = dynstr.subarray(at, Math.min(dynstr.length, at + MAX_NAME)).indexOf(0);
  return end <= 0 ? null : dynstr.toString('latin1', at, at + end);
}

/** DT_HASH: nbucket, nchain, then the arrays; nchain is the number of symbols. */
async function countFromHash(v: ElfView, w: Where, addr: number): Promise<number> {
  return v.on(await v.read(v.fileOffset(w.loads, addr, 8, 'DT_HASH'), 8)).u32(4);
}

/**
 * DT_GNU_HASH: the symbols hashed are symoffset..end, each bucket naming its chain's first symbol; the table ends
 * with the chain of the highest bucket, whose last entry has bit 0 set. Buckets and chain are read in chunks, and
 * the walk stops at the symbol cap.
 */
async function countFromGnuHash(v: ElfView, w: Where, addr: number): Promise<number> {
  const head = v.on(await v.read(v.fileOffset(w.loads, addr, 16, 'DT_GNU_HASH'), 16));
  const nbuckets = head.u32(0);
  const symoffset = head.u32(4);
  const bloomWords = head.u32(8);
  const cap = LIMITS.elfDynamicSymbols;
  if (nbuckets > cap || bloomWords > cap) throw new LimitExceededError('elfDynamicSymbols', `DT_GNU_HASH declares ${nbuckets} buckets and ${bloomWords} bloom words, over the ${cap} limit`);
  const buckets = addr + 16 + bloomWords * (v.elfClass / 8);
  let highest = 0;
  for (let first = 0; first < nbuckets; first += CHUNK) {
    const n = Math.min(CHUNK, nbuckets - first);
    const chunk = v.on(await v.read(v.fileOffset(w.loads, buckets + first * 4, n * 4, 'DT_GNU_HASH buckets'), n * 4));
    for (let i = 0; i < n; i++) highest = Math.max(highest, chunk.u32(i * 4));
  }
  if (highest < symoffset) return symoffset;
  const chains = buckets + nbuckets * 4;
  for (let index = highest; index <= cap; ) {
    const n = Math.min(CHUNK, cap + 1 - index);
    const at = chains + (index - symoffset) * 4;
    // The chain may end before a whole chunk: read only what its segment holds.
    const available = Math.min(n, chainRoom(w.loads, at));
    if (available <= 0) throw new MalformedElfError('DT_GNU_HASH chain runs past its segment');
    const chunk = v.on(await v.read(v.fileOffset(w.loads, at, available * 4, 'DT_GNU_HASH chain'), available * 4));
    for (let i = 0; i < available; i++, index++) if (chunk.u32(i * 4) & 1) return index + 1;
  }
  throw new LimitExceededError('elfDynamicSymbols', `the DT_GNU_HASH chain runs past ${cap} symbols`);
}

/** 32-bit words from `addr` to the end of the PT_LOAD file bytes holding it. */
function chainRoom(loads: readonly Load[], addr: number): number {
  const l = loads.find((s) => addr >= s.vaddr && addr < s.vaddr + s.filesz);
  return l ? Math.floor((l.vaddr + l.filesz - addr) / 4) : 0;
}

async function countFromSections(v: ElfView, w: Where): Promise<{ count: number; countFrom: 'section headers' } | null> {
  const { shoff, shentsize, shnum } = w.sections;
  if (shoff === 0 || shnum === 0) return null;
  if (shnum > LIMITS.elfSectionHeaders) throw new LimitExceededError('elfSectionHeaders', `e_shnum is ${shnum}, over the ${LIMITS.elfSectionHeaders} limit`);
  if (shentsize < (v.elfClass === 64 ? 64 : 40)) throw new MalformedElfError(`e_shentsize ${shentsize} is too small`);
  const table = v.on(await v.read(shoff, shnum * shentsize));
  for (let i = 0; i < shnum; i++) {
    const at = i * shentsize;
    if (table.u32(at + 4) !== SHT_DYNSYM) continue;
    const size = v.elfClass === 64 ? table.word(at + 32) : table.u32(at + 20);
    const entsize = v.elfClass === 64 ? table.word(at + 56) : table.u32(at + 36);
    if (entsize === 0) throw new MalformedElfError('SHT_DYNSYM has sh_entsize 0');
    return { count: Math.floor(size / entsize), countFrom: 'section headers' };
  }
  return null;
}
