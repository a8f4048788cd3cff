import { MachoError, type SliceHeader } from './macho';

/** What the load commands of one slice say about how it was built and what it links. */
export type LoadCommandFacts = {
  /** Bytes of machine code: the size of __TEXT,__text. */
  codeBytes: number;
  /** The slice defines Objective-C classes or categories (a non-empty __objc_classlist or __objc_catlist). */
  objcClasses: boolean;
  /** Dylibs named by LC_LOAD_DYLIB, LC_LOAD_WEAK_DYLIB, LC_REEXPORT_DYLIB, LC_LAZY_LOAD_DYLIB, LC_LOAD_UPWARD_DYLIB. */
  dylibs: Array<{ name: string; weak: boolean }>;
  /** LC_BUILD_VERSION (platform number) or LC_VERSION_MIN_IPHONEOS (platform null), versions as `X.Y.Z`. */
  build: { platform: number | null; minos: string; sdk: string } | null;
  symtab: { symoff: number; nsyms: number; stroff: number; strsize: number } | null;
  /** LC_DYSYMTAB's undefined-symbol range (indexes into the symbol table). */
  undefinedRange: { first: number; count: number } | null;
};

const LC_SEGMENT = 0x1;
const LC_SYMTAB = 0x2;
const LC_DYSYMTAB = 0xb;
const LC_LOAD_DYLIB = 0xc;
const LC_SEGMENT_64 = 0x19;
const LC_LAZY_LOAD_DYLIB = 0x20;
const LC_VERSION_MIN_IPHONEOS = 0x25;
const LC_BUILD_VERSION = 0x32;
const LC_LOAD_WEAK_DYLIB = 0x80000018;
const LC_REEXPORT_DYLIB = 0x8000001f;
const LC_LOAD_UPWARD_DYLIB = 0x80000023;
const DYLIB_COMMANDS = new Set([LC_LOAD_DYLIB, LC_LOAD_WEAK_DYLIB, LC_REEXPORT_DYLIB, LC_LAZY_LOAD_DYLIB, LC_LOAD_UPWARD_DYLIB]);
const OBJC_LISTS = new Set(['__objc_classlist', '__objc_catlist']);

/** A packed version (xxxx.yy.zz in nibbles of 16, 8, 8 bits) as otool prints it. */
export function versionString(v: number): string {
  return `${v >>> 16}.${(v >>> 8) & 0xff}.${v & 0xff}`;
}

/**
 * Walks the load commands read by readSliceCommands. Linear in their bytes (already capped); every size and count
 * is checked against the command that holds it, never trusted.
 */
export function parseLoadCommands(cmds: Buffer, h: SliceHeader, k: number): LoadCommandFacts {
  const u32 = (at: number) => (h.le ? cmds.readUInt32LE(at) : cmds.readUInt32BE(at));
  const u64 = (at: number) => Number(h.le ? cmds.readBigUInt64LE(at) : cmds.readBigUInt64BE(at));
  const facts: LoadCommandFacts = { codeBytes: 0, objcClasses: false, dylibs: [], build: null, symtab: null, undefinedRange: null };
  for (let i = 0, at = 0; i < h.ncmds; i++) {
    if (at + 8 > cmds.length) throw new MachoError(`slice ${k}: load command ${i} runs past sizeofcmds`);
    const cmd = u32(at);
    const size = u32(at + 4);
    if (size < 8 || at + size > cmds.length) throw new MachoError(`slice ${k}: load command ${i} has an invalid size`);
    const need = (n: number) => {
      if (size < n) throw new MachoError(`slice ${k}: load command ${i} (0x${cmd.toString(16)}) too short`);
    };
    if (cmd === LC_SEGMENT_64 || cmd === LC_SEGMENT) {
      const wide = cmd === LC_SEGMENT_64;
      const [head, stride] = wide ? [72, 80] : [56, 68];
      need(head);
      const nsects = u32(at + (wide ? 64 : 48));
      if (nsects > (size - head) / stride) throw new MachoError(`slice ${k}: segment command ${i} lists more sections than it holds`);
      for (let s = 0; s < nsects; s++) {
        const sect = at + head + s * stride;
        const name = fixedName(cmds, sect);
        const seg = fixedName(cmds, sect + 16);
        const bytes = wide ? u64(sect + 40) : u32(sect + 36);
        if (name === '__text' && seg === '__TEXT') facts.codeBytes += bytes;
        if (OBJC_LISTS.has(name) && bytes > 0) facts.objcClasses = true;
      }
    } else if (cmd === LC_SYMTAB) {
      need(24);
      if (facts.symtab) throw new MachoError(`slice ${k}: more than one LC_SYMTAB`);
      facts.symtab = { symoff: u32(at + 8), nsyms: u32(at + 12), stroff: u32(at + 16), strsize: u32(at + 20) };
    } else if (cmd === LC_DYSYMTAB) {
      need(32);
      facts.undefinedRange = { first: u32(at + 24), count: u32(at + 28) };
    } else if (DYLIB_COMMANDS.has(cmd)) {
      need(24);
      const nameAt = u32(at + 8);
      if (nameAt < 24 || nameAt >= size) throw new MachoError(`slice ${k}: dylib command ${i} names a string outside itself`);
      facts.dylibs.push({ name: cString(cmds, at + nameAt, at + size), weak: cmd === LC_LOAD_WEAK_DYLIB });
    } else if (cmd === LC_BUILD_VERSION) {
      need(24);
      facts.build = { platform: u32(at + 8), minos: versionString(u32(at + 12)), sdk: versionString(u32(at + 16)) };
    } else if (cmd === LC_VERSION_MIN_IPHONEOS && !facts.build) {
      need(16);
      facts.build = { platform: null, minos: versionString(u32(at + 8)), sdk: versionString(u32(at + 12)) };
    }
    at += size;
  }
  return facts;
}

/** A 16-byte name field (segment or section), NUL-padded. */
function fixedName(buf: Buffer, at: number): string {
  return cString(buf, at, at + 16);
}

/** Bytes from `start` to the first NUL before `end` (or to `end`), as latin1 so any byte is one character. */
function cString(buf: Buffer, start: number, end: number): string {
  // Searched within [start, end) only: a name without its NUL must not make each lookup scan the rest of the buffer.
  const nul = buf.subarray(start, end).indexOf(0);
  return buf.toString('latin1', start, nul >= 0 ? start + nul : end);
}
