// What LLVM's Mach-O tools say about a file, per architecture: the oracle the Mach-O reader is compared with.
// llvm-lipo lists the architectures and extracts each slice of a fat file (llvm-otool 14 ignores -arch), llvm-otool
// prints the header (-hv) and load commands (-l), llvm-nm the undefined symbols (-u).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { run } from './host-tools';


export type OtoolSlice = {
  arch: string;
  /** otool's name for the file type: EXECUTE, DYLIB, ... */
  filetype: string;
  pie: boolean;
  /** Size of __TEXT,__text. */
  codeBytes: number;
  /** A non-empty __objc_classlist or __objc_catlist section. */
  objcClasses: boolean;
  /** LC_LOAD_DYLIB, LC_LOAD_WEAK_DYLIB, LC_REEXPORT_DYLIB, LC_LAZY_LOAD_DYLIB, LC_LOAD_UPWARD_DYLIB names, in order. */
  dylibs: string[];
  /** minos and sdk as otool prints them (`15.0`, `18.0`), from LC_BUILD_VERSION or LC_VERSION_MIN_IPHONEOS. */
  minos: string | null;
  sdk: string | null;
  /** `llvm-nm -u`. */
  undefined: string[];
};

const DYLIB_COMMANDS = new Set(['LC_LOAD_DYLIB', 'LC_LOAD_WEAK_DYLIB', 'LC_REEXPORT_DYLIB', 'LC_LAZY_LOAD_DYLIB', 'LC_LOAD_UPWARD_DYLIB']);

/** The tools' view of every architecture of a thin or fat Mach-O file. */
export async function otoolFacts(file: string): Promise<OtoolSlice[]> {
  const archs = (await run('llvm-lipo-14', ['-archs', file])).stdout.trim().split(/\s+/);
  const fat = (await run('llvm-lipo-14', ['-info', file])).stdout.startsWith('Architectures in the fat file');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'otool-facts-'));
  try {
    const out: OtoolSlice[] = [];
    for (const arch of archs) {
      const thin = fat ? path.join(dir, arch) : file;
      if (fat) await run('llvm-lipo-14', ['-thin', arch, file, '-output', thin]);
      out.push({ arch, ...parseHeader((await run('llvm-otool-14', ['-hv', thin])).stdout), ...parseLoadCommands((await run('llvm-otool-14', ['-l', thin])).stdout),
        undefined: (await run('llvm-nm', ['-u', thin])).stdout.split('\n').map((l) => l.trim()).filter(Boolean) });
    }
    return out;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The last line of `otool -hv`: magic cputype cpusubtype caps filetype ncmds sizeofcmds flags... */
function parseHeader(text: string): { filetype: string; pie: boolean } {
  const fields = text.trim().split('\n').pop()?.trim().split(/\s+/) ?? [];
  return { filetype: fields[4], pie: fields.slice(7).includes('PIE') };
}

/** `otool -l`: "Load command N" and "Section" blocks of `key value` lines. */
function parseLoadCommands(text: string): Pick<OtoolSlice, 'codeBytes' | 'objcClasses' | 'dylibs' | 'minos' | 'sdk'> {
  const facts: Pick<OtoolSlice, 'codeBytes' | 'objcClasses' | 'dylibs' | 'minos' | 'sdk'> = { codeBytes: 0, objcClasses: false, dylibs: [], minos: null, sdk: null };
  const blocks = text.split(/\n(?=Load command \d+|Section\n)/);
  for (const block of blocks) {
    const kv = new Map<string, string>();
    for (const line of block.split('\n')) {
      const m = /^\s*(\S+(?: version)?)\s+(.*)$/.exec(line);
      if (m && !kv.has(m[1])) kv.set(m[1], m[2].trim());
    }
    if (block.startsWith('Section')) {
      const size = Number.parseInt(kv.get('size') ?? '0', 16);
      if (kv.get('sectname') === '__text' && kv.get('segname') === '__TEXT') facts.codeBytes += size;
      if (['__objc_classlist', '__objc_catlist'].includes(kv.get('sectname') ?? '') && size > 0) facts.objcClasses = true;
      continue;
    }
    const cmd = kv.get('cmd') ?? '';
    if (DYLIB_COMMANDS.has(cmd)) facts.dylibs.push((kv.get('name') ?? '').replace(/ \(offset \d+\)$/, ''));
    if (cmd === 'LC_BUILD_VERSION' || (cmd === 'LC_VERSION_MIN_IPHONEOS' && facts.minos === null)) {
      facts.minos = kv.get('minos') ?? kv.get('version') ?? null;
      facts.sdk = kv.get('sdk') ?? null;
    }
  }
  return facts;
}
