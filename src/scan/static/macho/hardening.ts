import { LimitExceededError } from '../package/errors';
import { LIMITS } from '../package/limits';
import { parseLoadCommands, type LoadCommandFacts } from './load-commands';
import { MachoError, readSliceCommands, type ByteSource, type SliceCommands } from './macho';
import { NLIST_SIZE, undefinedSymbols } from './symbols';

/** How one architecture of a Mach-O was built: what the header, the load commands and the imports say. */
export type SliceFacts = Omit<LoadCommandFacts, 'symtab' | 'undefinedRange'> & {
  /** Architecture name as llvm-lipo -archs prints it (arm64, arm64e, x86_64, armv7, ...). */
  arch: string;
  filetype: number;
  /** MH_PIE in the header flags: the executable is loaded at a random address. */
  pie: boolean;
  /** Undefined (imported) symbols, as many as `nm -u` lists, and which of the watched names are among them. */
  undefinedSymbols: number;
  imports: string[];
};

const MH_PIE = 0x200000;
export const MH_EXECUTE = 0x2;

const CPU_ARCH_ABI64 = 0x01000000;
const CPU_ARCH_ABI64_32 = 0x02000000;
const CPU_TYPE_X86 = 7;
const CPU_TYPE_ARM = 12;
const CPU_SUBTYPE_MASK = 0x00ffffff;
const ARM_SUBTYPES: Record<number, string> = { 5: 'armv4t', 6: 'armv6', 7: 'armv5', 9: 'armv7', 10: 'armv7f', 11: 'armv7s', 12: 'armv7k', 14: 'armv6m', 15: 'armv7m', 16: 'armv7em', 13: 'armv8' };

/** The architecture name llvm-lipo and otool print for a cputype and cpusubtype. */
export function archName(cputype: number, cpusubtype: number): string {
  const sub = cpusubtype & CPU_SUBTYPE_MASK;
  if (cputype === (CPU_TYPE_ARM | CPU_ARCH_ABI64)) return sub === 2 ? 'arm64e' : 'arm64';
  if (cputype === (CPU_TYPE_ARM | CPU_ARCH_ABI64_32)) return 'arm64_32';
  if (cputype === (CPU_TYPE_X86 | CPU_ARCH_ABI64)) return sub === 8 ? 'x86_64h' : 'x86_64';
  if (cputype === CPU_TYPE_X86) return 'i386';
  if (cputype === CPU_TYPE_ARM) return ARM_SUBTYPES[sub] ?? 'arm';
  return `cputype-${cputype >>> 0}`;
}

/**
 * Hardening facts of every slice of a thin or fat Mach-O: the header's MH_PIE, the load commands (code size,
 * Objective-C classes, linked dylibs, build version) and which `watched` names it imports. Two short passes read the
 * headers and load commands, one more the symbol tables (LC_DYSYMTAB's undefined range when present, else every
 * entry: at most LIMITS.machoSymbols entries in all) and string tables (at most LIMITS.machoStringBytes in all).
 */
export async function readMachoFacts(src: ByteSource, watched: ReadonlySet<string>): Promise<SliceFacts[]> {
  const slices = await readSliceCommands(src);
  const parsed = slices.map((s, k) => ({ s, facts: parseLoadCommands(s.commands, s.header, k) }));
  const wanted = parsed.map(({ s, facts }, k) => symbolRanges(s, facts, k));
  let entries = 0;
  let strings = 0;
  for (const w of wanted) {
    entries += w.entries;
    strings += w.strtab[1] - w.strtab[0];
  }
  if (entries > LIMITS.machoSymbols) throw new LimitExceededError('machoSymbols', `the Mach-O holds ${entries} symbol table entries to read, over the ${LIMITS.machoSymbols} limit`);
  if (strings > LIMITS.machoStringBytes) throw new LimitExceededError('machoStringBytes', `the Mach-O's string tables hold ${strings} bytes, over the ${LIMITS.machoStringBytes}-byte limit`);
  const read = (src.finalRanges ?? src.ranges).bind(src);
  const parts = await read(wanted.flatMap((w) => [w.nlist, w.strtab]));
  return parsed.map(({ s, facts }, k) => {
    const { symtab: _symtab, undefinedRange: _range, ...rest } = facts;
    const symbols = undefinedSymbols(parts[2 * k], parts[2 * k + 1], s.header, watched);
    return {
      ...rest,
      arch: archName(s.header.cputype, s.header.cpusubtype),
      filetype: s.header.filetype,
      pie: (s.header.flags & MH_PIE) !== 0,
      undefinedSymbols: symbols.count,
      imports: symbols.watched,
    };
  });
}

type Ranges = { nlist: readonly [number, number]; strtab: readonly [number, number]; entries: number };

/** File ranges of a slice's nlist entries to read and of its string table, checked against the slice. */
function symbolRanges(s: SliceCommands, facts: LoadCommandFacts, k: number): Ranges {
  const none = { nlist: [s.offset, s.offset] as const, strtab: [s.offset, s.offset] as const, entries: 0 };
  const t = facts.symtab;
  if (!t) return none;
  const size = s.header.is64 ? NLIST_SIZE[64] : NLIST_SIZE[32];
  if (t.symoff + t.nsyms * size > s.size) throw new MachoError(`slice ${k}: LC_SYMTAB's symbols run past the end of the slice`);
  if (t.stroff + t.strsize > s.size) throw new MachoError(`slice ${k}: LC_SYMTAB's string table runs past the end of the slice`);
  const range = facts.undefinedRange;
  // The undefined range is trusted only inside the table; otherwise every entry is read and filtered.
  const [first, count] = range && range.first + range.count <= t.nsyms ? [range.first, range.count] : [0, t.nsyms];
  const start = s.offset + t.symoff + first * size;
  return {
    nlist: [start, start + count * size],
    strtab: [s.offset + t.stroff, s.offset + t.stroff + t.strsize],
    entries: count,
  };
}
