import { LimitExceededError } from '../package/errors';
import { LIMITS } from '../package/limits';
import {
  DF_1_NOW, DF_BIND_NOW, DF_TEXTREL, DT_BIND_NOW, DT_FLAGS, DT_FLAGS_1, DT_GNU_HASH, DT_HASH, DT_NEEDED, DT_NULL, DT_RPATH,
  DT_RUNPATH, DT_STRSZ, DT_STRTAB, DT_SYMENT, DT_SYMTAB, DT_TEXTREL, PT_DYNAMIC, PT_LOAD, machineName,
} from './elf-constants';
import { ElfView, MalformedElfError, type ElfSource } from './elf-view';
import { readDynamicSymbols, type DynamicSymbols } from './elf-symbols';

export { MalformedElfError, type ElfSource } from './elf-view';

export type ProgramHeader = { type: number; flags: number; offset: number; vaddr: number; filesz: number; memsz: number; align: number };

/** What the dynamic section says (null when the file has no PT_DYNAMIC). Strings are those DT_STRTAB holds. */
export type DynamicInfo = {
  textrel: boolean;
  /** DT_BIND_NOW, DF_BIND_NOW in DT_FLAGS or DF_1_NOW in DT_FLAGS_1. */
  bindNow: boolean;
  flags: number;
  flags1: number;
  needed: string[];
  rpath: string | null;
  runpath: string | null;
};

export type ElfFacts = {
  elfClass: 32 | 64;
  endian: 'little' | 'big';
  type: number;
  machine: number;
  machineName: string;
  segments: ProgramHeader[];
  dynamic: DynamicInfo | null;
  /** The dynamic symbol table (null when the dynamic section names none or its size cannot be told). */
  symbols: DynamicSymbols | null;
};

const ELF_MAGIC = 0x7f454c46;

/** True when the first four bytes are ELF's magic. */
export function isElf(head: Buffer): boolean {
  return head.length >= 4 && head.readUInt32BE(0) === ELF_MAGIC;
}

/**
 * Reads the facts the hardening rules need from an ELF file: the header, the program headers, the dynamic section
 * and the dynamic symbols. Every offset and count is checked against the file's size and the caps of limits.ts
 * before it is used, and the work is linear in what is read. Rejects with MalformedElfError (not an ELF file, or one
 * no loader would accept) or LimitExceededError; nothing else.
 */
export async function readElf(src: ElfSource): Promise<ElfFacts> {
  if (src.size < 52) throw new MalformedElfError('file too short for an ELF header');
  const ident = await src.read(0, Math.min(src.size, 64));
  if (!isElf(ident)) throw new MalformedElfError('no ELF magic');
  const elfClass = ident[4] === 1 ? 32 : ident[4] === 2 ? 64 : null;
  const endian = ident[5] === 1 ? 'little' : ident[5] === 2 ? 'big' : null;
  if (!elfClass || !endian) throw new MalformedElfError(`unknown ELF class ${ident[4]} or data encoding ${ident[5]}`);
  if (elfClass === 64 && ident.length < 64) throw new MalformedElfError('file too short for an ELF64 header');
  const v = new ElfView(src, elfClass, endian);
  const h = v.on(ident);
  const type = h.u16(16);
  const machine = h.u16(18);
  const phoff = elfClass === 64 ? h.word(32) : h.u32(28);
  const phentsize = h.u16(elfClass === 64 ? 54 : 42);
  const phnum = h.u16(elfClass === 64 ? 56 : 44);
  const shoff = elfClass === 64 ? h.word(40) : h.u32(32);
  const shentsize = h.u16(elfClass === 64 ? 58 : 46);
  const shnum = h.u16(elfClass === 64 ? 60 : 48);
  const segments = await readProgramHeaders(v, phoff, phentsize, phnum);
  const dyn = segments.find((s) => s.type === PT_DYNAMIC);
  if (!dyn) return { elfClass, endian, type, machine, machineName: machineName(machine), segments, dynamic: null, symbols: null };
  const entries = await readDynamicEntries(v, dyn);
  const loads = segments.filter((s) => s.type === PT_LOAD);
  const strtab = entries.get(DT_STRTAB)?.[0];
  const strsz = entries.get(DT_STRSZ)?.[0] ?? 0;
  if (strsz > LIMITS.elfDynstrBytes) throw new LimitExceededError('elfDynstrBytes', `DT_STRSZ is ${strsz} bytes, over the ${LIMITS.elfDynstrBytes}-byte limit`);
  const dynstr = strtab !== undefined && strsz > 0 ? await v.read(v.fileOffset(loads, strtab, strsz, 'DT_STRTAB'), strsz) : Buffer.alloc(0);
  const str = (at: number | undefined): string | null => (at === undefined ? null : stringAt(dynstr, at));
  const flags = entries.get(DT_FLAGS)?.[0] ?? 0;
  const flags1 = entries.get(DT_FLAGS_1)?.[0] ?? 0;
  const dynamic: DynamicInfo = {
    textrel: entries.has(DT_TEXTREL) || (flags & DF_TEXTREL) !== 0,
    bindNow: entries.has(DT_BIND_NOW) || (flags & DF_BIND_NOW) !== 0 || (flags1 & DF_1_NOW) !== 0,
    flags,
    flags1,
    needed: (entries.get(DT_NEEDED) ?? []).map((at) => stringAt(dynstr, at) ?? '<corrupt>'),
    rpath: entries.has(DT_RPATH) ? (str(entries.get(DT_RPATH)?.[0]) ?? '<corrupt>') : null,
    runpath: entries.has(DT_RUNPATH) ? (str(entries.get(DT_RUNPATH)?.[0]) ?? '<corrupt>') : null,
  };
  const symtab = entries.get(DT_SYMTAB)?.[0];
  const symbols = symtab === undefined ? null : await readDynamicSymbols(v, {
    loads, symtab, dynstr, syment: entries.get(DT_SYMENT)?.[0] ?? null,
    hash: entries.get(DT_HASH)?.[0] ?? null, gnuHash: entries.get(DT_GNU_HASH)?.[0] ?? null,
    sections: { shoff, shentsize, shnum },
  });
  return { elfClass, endian, type, machine, machineName: machineName(machine), segments, dynamic, symbols };
}

async function readProgramHeaders(v: ElfView, phoff: number, phentsize: number, phnum: number): Promise<ProgramHeader[]> {
  if (phnum === 0) return [];
  if (phnum > LIMITS.elfProgramHeaders) throw new LimitExceededError('elfProgramHeaders', `e_phnum is ${phnum}, over the ${LIMITS.elfProgramHeaders} limit`);
  const minimum = v.elfClass === 64 ? 56 : 32;
  if (phentsize < minimum) throw new MalformedElfError(`e_phentsize ${phentsize} is below ${minimum}`);
  const table = v.on(await v.read(phoff, phentsize * phnum));
  const out: ProgramHeader[] = [];
  for (let i = 0; i < phnum; i++) {
    const at = i * phentsize;
    out.push(v.elfClass === 64
      ? { type: table.u32(at), flags: table.u32(at + 4), offset: table.word(at + 8), vaddr: table.word(at + 16), filesz: table.word(at + 32), memsz: table.word(at + 40), align: table.word(at + 48) }
      : { type: table.u32(at), offset: table.u32(at + 4), vaddr: table.u32(at + 8), filesz: table.u32(at + 16), memsz: table.u32(at + 20), flags: table.u32(at + 24), align: table.u32(at + 28) });
  }
  return out;
}

/** Chunk of dynamic entries read at a time: a real dynamic section is one chunk. */
const DYNAMIC_CHUNK = 256;

/**
 * The dynamic entries up to DT_NULL (or the end of the segment's file bytes), by tag; tags that do not fit 32 bits
 * are none the rules read and are skipped. Values the rules use are file offsets, addresses or sizes (checked when
 * used); a value past 2^53 is kept as Infinity, which every later check refuses.
 */
async function readDynamicEntries(v: ElfView, dyn: ProgramHeader): Promise<Map<number, number[]>> {
  const entsize = v.elfClass === 64 ? 16 : 8;
  const total = Math.floor(dyn.filesz / entsize);
  if (dyn.offset + total * entsize > v.size) throw new MalformedElfError(`PT_DYNAMIC (offset ${dyn.offset}, ${dyn.filesz} bytes) runs past the end of the file`);
  const entries = new Map<number, number[]>();
  for (let first = 0; first < total; first += DYNAMIC_CHUNK) {
    const count = Math.min(DYNAMIC_CHUNK, total - first);
    const chunk = v.on(await v.read(dyn.offset + first * entsize, count * entsize));
    for (let i = 0; i < count; i++) {
      if (first + i >= LIMITS.elfDynamicEntries) throw new LimitExceededError('elfDynamicEntries', `the dynamic section holds more than ${LIMITS.elfDynamicEntries} entries before DT_NULL`);
      const at = i * entsize;
      const tag = v.elfClass === 64 ? chunk.tag64(at) : chunk.u32(at);
      if (tag === DT_NULL) return entries;
      if (tag === null) continue;
      const value = v.elfClass === 64 ? chunk.wordOrInfinity(at + 8) : chunk.u32(at + 4);
      const list = entries.get(tag);
      if (list) list.push(value);
      else entries.set(tag, [value]);
    }
  }
  return entries;
}

/** Longest string read from dynstr: library names and paths are short; a longer one is reported as corrupt. */
const MAX_STRING = 4096;

/** The NUL-terminated string at `at` in dynstr, or null when `at` is outside it or no NUL ends it soon enough. */
export function stringAt(dynstr: Buffer, at: number): string | null {
  if (!Number.isSafeInteger(at) || at < 0 || at >= dynstr.length) return null;
  const end = dynstr.subarray(at, Math.min(dynstr.length, at + MAX_STRING)).indexOf(0);
  return end < 0 ? null : dynstr.toString('latin1', at, at + end);
}
