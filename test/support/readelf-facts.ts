// What binutils' readelf says about an ELF file (`readelf -lhdW --dyn-syms`), parsed into the facts the native
// library rules use, so the tests compare the reader with readelf rather than with expectations written by hand.
import { readFile } from 'node:fs/promises';
import { readElf, type ElfFacts } from '../../src/scan/static/native/elf';
import { run } from './host-tools';


export type ReadelfSegment = { type: string; offset: number; vaddr: number; filesz: number; memsz: number; flags: number; align: number };

export type ReadelfFacts = {
  elfClass: 32 | 64;
  endian: 'little' | 'big';
  machineName: string;
  segments: ReadelfSegment[];
  dynamic: { needed: string[]; rpath: string | null; runpath: string | null; textrel: boolean; bindNow: boolean } | null;
  symbols: { count: number; imports: string[]; definedFunctions: number } | null;
};

/** readelf's names of the segment types, by number (those it prints by name for every machine in the corpus). */
export const SEGMENT_TYPES: Record<string, number> = {
  LOAD: 1, DYNAMIC: 2, INTERP: 3, NOTE: 4, PHDR: 6, TLS: 7,
  GNU_EH_FRAME: 0x6474e550, GNU_STACK: 0x6474e551, GNU_RELRO: 0x6474e552, GNU_PROPERTY: 0x6474e553,
};

const SEGMENT = /^\s+(\S+)\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+0x[0-9a-f]+\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+([RWE ]{3})\s+(0x[0-9a-f]+|\d+)\s*$/;
const DYNAMIC = /^\s+0x[0-9a-f]+\s+\((\w+)\)\s+(.*)$/;
const SYMBOL = /^\s+\d+:\s+[0-9a-f]+\s+\S+\s+(\w+)\s+\w+\s+\w+\s+(\w+)\s*(\S*)/;

export async function readelfFacts(file: string): Promise<ReadelfFacts> {
  const { stdout } = await run('readelf', ['-lhdW', '--dyn-syms', file], { maxBuffer: 64 << 20, env: { ...process.env, LC_ALL: 'C' } });
  const lines = stdout.split('\n');
  const field = (name: string) => lines.find((l) => l.trim().startsWith(`${name}:`))?.split(':').slice(1).join(':').trim() ?? '';
  const segments: ReadelfSegment[] = [];
  let inSegments = false;
  let dynamic: ReadelfFacts['dynamic'] = null;
  let symbols: ReadelfFacts['symbols'] = null;
  for (const line of lines) {
    if (line.startsWith('Program Headers:')) inSegments = true;
    else if (line.trim() === '' || line.startsWith(' Section to Segment')) inSegments = false;
    const s = inSegments ? SEGMENT.exec(line) : null;
    if (s) {
      const flags = (s[6].includes('R') ? 4 : 0) | (s[6].includes('W') ? 2 : 0) | (s[6].includes('E') ? 1 : 0);
      segments.push({ type: s[1], offset: Number(s[2]), vaddr: Number(s[3]), filesz: Number(s[4]), memsz: Number(s[5]), flags, align: Number(s[7]) });
      continue;
    }
    if (line.startsWith('Dynamic section at offset')) dynamic = { needed: [], rpath: null, runpath: null, textrel: false, bindNow: false };
    const d = dynamic ? DYNAMIC.exec(line) : null;
    if (d && dynamic) {
      const [, tag, value] = d;
      const bracket = /\[(.*)\]/.exec(value)?.[1] ?? '';
      if (tag === 'NEEDED') dynamic.needed.push(bracket);
      if (tag === 'RPATH') dynamic.rpath = bracket;
      if (tag === 'RUNPATH') dynamic.runpath = bracket;
      if (tag === 'TEXTREL' || (tag === 'FLAGS' && /\bTEXTREL\b/.test(value))) dynamic.textrel = true;
      if (tag === 'BIND_NOW' || (tag === 'FLAGS' && /\bBIND_NOW\b/.test(value)) || (tag === 'FLAGS_1' && /\bNOW\b/.test(value))) dynamic.bindNow = true;
    }
    const count = /^Symbol table '\.dynsym' contains (\d+) entries/.exec(line);
    if (count) symbols = { count: Number(count[1]), imports: [], definedFunctions: 0 };
    const sym = symbols ? SYMBOL.exec(line) : null;
    if (sym && symbols) {
      const [, type, ndx, name] = sym;
      const bare = name.split('@')[0];
      if (ndx === 'UND' && bare && !symbols.imports.includes(bare)) symbols.imports.push(bare);
      if (ndx !== 'UND' && type === 'FUNC') symbols.definedFunctions++;
    }
  }
  return {
    elfClass: field('Class') === 'ELF64' ? 64 : 32,
    endian: field('Data').includes('big') ? 'big' : 'little',
    machineName: field('Machine'),
    segments,
    dynamic,
    symbols,
  };
}

/** zipalign's verdict per stored entry of `zipalign -c -v <align>`: its data offset and whether it is aligned. */
export async function zipalignVerdicts(apk: string, args: string[]): Promise<Map<string, { offset: number; ok: boolean }>> {
  const out = await run('zipalign', ['-c', '-v', ...args, apk]).then((r) => r.stdout, (err: { stdout?: string }) => err.stdout ?? '');
  const verdicts = new Map<string, { offset: number; ok: boolean }>();
  for (const line of out.split('\n')) {
    const m = /^\s*(\d+)\s+(\S+)\s+\((OK|BAD)[^)]*\)/.exec(line);
    if (m && !line.includes('compressed')) verdicts.set(m[2], { offset: Number(m[1]), ok: m[3] === 'OK' });
  }
  return verdicts;
}

/** Our reader's facts of a file on disk. */
export async function factsOf(file: string): Promise<ElfFacts> {
  const bytes = await readFile(file);
  return readElf({ size: bytes.length, read: async (offset, length) => bytes.subarray(offset, offset + length) });
}
